import Crypto
import Foundation
import Testing

@testable import Keychain

/// The password generator of `add-password --generate`, `edit --generate` and the window: characters, and words from
/// the EFF long word list (Electronic Frontier Foundation, 2016, CC BY 3.0; the copy Debian's `diceware` package
/// ships as `wordlist_en_eff.txt`, dice numbers removed; NOTICE names it). `test_keychain_cli.py` compares the
/// repository's copy with that Debian file byte for byte.
@Suite struct PasswordGeneratorTests {
    static let listFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Keychain/WordLists/eff_large_wordlist.txt")

    /// Whether `password` is `count` words of `list` joined by `separator` (a few words hold a hyphen themselves,
    /// like "t-shirt", so the split is searched, not taken at every hyphen).
    static func isWords(_ password: String, count: Int, separator: String, list: Set<String>) -> Bool {
        let parts = password.components(separatedBy: separator)
        func from(_ start: Int, _ left: Int) -> Bool {
            if start == parts.count { return left == 0 }
            guard left > 0 else { return false }
            for end in start..<parts.count
            where list.contains(parts[start...end].joined(separator: separator)) && from(end + 1, left - 1) {
                return true
            }
            return false
        }
        return from(0, count)
    }

    @Test func theWordListIsTheEFFLongListAsShipped() throws {
        let bytes = try Data(contentsOf: Self.listFile)
        // SHA-256 of Debian diceware 0.10-2's wordlist_en_eff.txt with its dice numbers cut (`cut -f2`), which is
        // also byte for byte xkcdpass's eff-long.
        #expect(
            SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
                == "6d557f0693958fb5e650b68b5bee585eb82cf4da32965505c789e924743bc522")
        let list = try PasswordGenerator.wordList()
        #expect(list.count == 7776 && Set(list).count == 7776)
        #expect(list.joined(separator: "\n") + "\n" == String(decoding: bytes, as: UTF8.self))
        #expect(list.first == "abacus" && list.last == "zoom")
    }

    @Test func wordsAreDrawnFromTheListWithTheirStrength() throws {
        let list = Set(try PasswordGenerator.wordList())
        let six = try PasswordGenerator.words()
        #expect(Self.isWords(six.password, count: 6, separator: "-", list: list))
        #expect(!Self.isWords("abacus-abdomen-notaword", count: 3, separator: "-", list: list))
        #expect(abs(six.bits - 6 * log2(7776.0)) < 1e-9 && Int(six.bits) == 77)
        let spaced = try PasswordGenerator.words(count: 4, separator: " ")
        let words = spaced.password.split(separator: " ").map(String.init)
        #expect(words.count == 4 && words.allSatisfy(list.contains))
        #expect(Int(spaced.bits) == 51)
    }

    @Test(arguments: [2, 21, 0, -1]) func aWordCountOutsideThreeToTwentyIsRefused(_ count: Int) {
        #expect(errorCode { _ = try PasswordGenerator.words(count: count) } == .invalidGeneratorSettings)
    }

    @Test func aSeparatorOtherThanOneSpaceOrPunctuationIsRefused() {
        #expect(errorCode { _ = try PasswordGenerator.words(separator: "ab") } == .invalidGeneratorSettings)
        #expect(errorCode { _ = try PasswordGenerator.words(separator: "x") } == .invalidGeneratorSettings)
    }

    /// Uniform over the whole list: 3,000 one-word draws land on about 2,490 distinct words (7,776 × (1 − e^−0.386));
    /// a draw from half the list would give at most about 2,090. The bound, 2,200, is over ten standard deviations
    /// from either.
    @Test func drawsCoverTheWholeList() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let three = try PasswordGenerator.words(count: 3, separator: " ").password.split(separator: " ")
            seen.formUnion(three.map(String.init))
        }
        #expect(seen.count > 2200, "\(seen.count) distinct words in 3,000 draws")
    }

    @Test func charactersComeFromTheAlphabet() throws {
        let generated = try PasswordGenerator.characters()
        #expect(generated.password.count == 20)
        #expect(generated.password.allSatisfy(PasswordGenerator.alphabet.contains))
        #expect(Int(generated.bits) == 120)
        #expect(errorCode { _ = try PasswordGenerator.characters(length: 7) } == .invalidGeneratorSettings)
        #expect(errorCode { _ = try PasswordGenerator.characters(length: 129) } == .invalidGeneratorSettings)
    }
}
