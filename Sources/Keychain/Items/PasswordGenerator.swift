import Foundation

/// The passwords the keychain makes, for `sesame keychain add-password --generate` and `edit --generate` and the
/// toolbar window's generator: characters drawn uniformly from an alphabet, or words drawn uniformly from the EFF
/// long word list. Each draw is `Int.random(in:using:)` over `SystemRandomNumberGenerator` (the system's CSPRNG,
/// no modulo bias), so the strength is exactly count × log2(choices) bits.
///
/// The word list: the Electronic Frontier Foundation's long word list for dice-generated passphrases (2016, 7,776
/// words, CC BY 3.0), as Debian's `diceware` package ships it (`wordlist_en_eff.txt`, dice numbers removed),
/// in `WordLists/eff_large_wordlist.txt`; NOTICE names it. It is checked when loaded: 7,776 distinct words of
/// lower-case letters and hyphens, else `wordListUnavailable`.
public enum PasswordGenerator {
    /// A generated password and its strength.
    public struct Generated: Sendable, Hashable {
        public let password: String
        /// Bits of entropy: count × log2(number of choices per draw).
        public let bits: Double
    }

    /// 62 letters and digits less the look-alikes (I, O, l, 0, 1), and 8 symbols: 65 characters.
    public static let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_.!@#%+")
    public static let lengths = 8...128
    public static let wordCounts = 3...20
    /// The number of words in the EFF long word list (6^5, five dice).
    public static let wordListSize = 7776
    public static let wordListName = "the EFF long word list (CC BY 3.0)"

    /// `length` characters from ``alphabet`` (20 by default: about 120 bits).
    public static func characters(length: Int = 20) throws(KeychainError) -> Generated {
        guard lengths.contains(length) else {
            throw KeychainError(.invalidGeneratorSettings, reason: "a length of 8 to 128 characters")
        }
        var random = SystemRandomNumberGenerator()
        let password = String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] })
        return Generated(password: password, bits: Double(length) * log2(Double(alphabet.count)))
    }

    /// `count` words from the EFF long word list joined by `separator` (6 by default: about 77 bits).
    public static func words(count: Int = 6, separator: String = "-") throws(KeychainError) -> Generated {
        guard wordCounts.contains(count) else {
            throw KeychainError(.invalidGeneratorSettings, reason: "3 to 20 words")
        }
        guard separator.count <= 1, separator.allSatisfy({ " -._".contains($0) }) else {
            throw KeychainError(.invalidGeneratorSettings, reason: "a separator of one space, -, . or _ (or none)")
        }
        let list = try wordList()
        var random = SystemRandomNumberGenerator()
        let words = (0..<count).map { _ in list[Int.random(in: 0..<list.count, using: &random)] }
        return Generated(password: words.joined(separator: separator), bits: Double(count) * log2(Double(list.count)))
    }

    /// The word list, read from the module's resources once and checked.
    public static func wordList() throws(KeychainError) -> [String] {
        switch loaded {
        case .success(let list): return list
        case .failure(let error): throw error
        }
    }

    private static let loaded: Result<[String], KeychainError> = {
        guard
            let url = Bundle.module.url(
                forResource: "eff_large_wordlist", withExtension: "txt", subdirectory: "WordLists"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            return .failure(KeychainError(.wordListUnavailable, reason: "WordLists/eff_large_wordlist.txt is missing"))
        }
        let list = text.split(separator: "\n").map(String.init)
        guard list.count == wordListSize, Set(list).count == wordListSize,
            list.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (97...122).contains($0) || $0 == 45 } })
        else {
            return .failure(
                KeychainError(.wordListUnavailable, reason: "the word list is not 7,776 distinct lower-case words"))
        }
        return .success(list)
    }()
}
