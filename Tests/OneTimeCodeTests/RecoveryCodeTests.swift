import Testing

@testable import OneTimeCode

struct RecoveryCodeTests {
    @Test func shapeAndAlphabet() throws {
        let (codes, set) = try RecoveryCodeSet.generate(count: 10)
        #expect(codes.count == 10 && set.remaining == 10)
        #expect(Set(codes).count == 10)
        for code in codes {
            let groups = code.split(separator: "-")
            #expect(groups.count == 4 && groups.allSatisfy { $0.count == 4 })
            // No look-alikes: letters I, L, O (and U) never appear.
            #expect(code.allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ-".contains($0) })
        }
        // Only hashes are kept: no stored value contains a code's bytes.
        for hash in set.hashes {
            #expect(hash.count == 32)
            for code in codes { #expect(!String(decoding: hash, as: UTF8.self).contains(code)) }
        }
    }

    @Test func singleUse() throws {
        var (codes, set) = try RecoveryCodeSet.generate(count: 3)
        let first = set.redeem(codes[1])
        let again = set.redeem(codes[1])
        #expect(first && !again)
        #expect(set.remaining == 2)
        let rest = [set.redeem(codes[0]), set.redeem(codes[2])]
        #expect(rest == [true, true])
        #expect(set.remaining == 0)
    }

    /// Typed back with other case, spaces instead of dashes, no separators, or look-alike letters.
    @Test func normalisation() throws {
        let (codes, set) = try RecoveryCodeSet.generate(count: 1)
        let code = codes[0]
        let variants = [
            code.lowercased(),
            code.replacingOccurrences(of: "-", with: " "),
            code.replacingOccurrences(of: "-", with: ""),
            " " + code + " ",
            code.replacingOccurrences(of: "0", with: "O").replacingOccurrences(of: "1", with: "l"),
            code.replacingOccurrences(of: "1", with: "I").lowercased(),
        ]
        for variant in variants {
            #expect(set.match(variant) == 0, "\(variant)")
        }
    }

    @Test func wrongCodesDoNotMatch() throws {
        let (codes, set) = try RecoveryCodeSet.generate(count: 5)
        let code = codes[0]
        // Change one symbol to another valid one.
        var symbols = Array(code)
        symbols[0] = symbols[0] == "A" ? "B" : "A"
        #expect(set.match(String(symbols)) == nil)
        #expect(set.match(String(code.dropLast())) == nil)  // too short
        #expect(set.match(code + "A") == nil)  // too long
        #expect(set.match(code.replacingOccurrences(of: code.suffix(1), with: "U")) == nil)  // U is not in the alphabet
        #expect(set.match("") == nil)
        #expect(set.match(String(repeating: "A", count: 10_000)) == nil)
    }

    /// A different set's salt changes every hash: the same code does not carry over between sets.
    @Test func setsAreSalted() throws {
        let (codes, set) = try RecoveryCodeSet.generate(count: 1)
        let other = try RecoveryCodeSet(salt: [UInt8](repeating: 7, count: 16), hashes: set.hashes)
        #expect(set.match(codes[0]) == 0)
        #expect(other.match(codes[0]) == nil)
    }

    @Test func storageIsValidated() throws {
        let (_, set) = try RecoveryCodeSet.generate(count: 2)
        #expect(try RecoveryCodeSet(salt: set.salt, hashes: set.hashes) == set)
        #expect(throws: OneTimeCodeError(.invalidRecoveryCode)) {
            try RecoveryCodeSet(salt: [1, 2, 3], hashes: set.hashes)
        }
        #expect(throws: OneTimeCodeError(.invalidRecoveryCode)) {
            try RecoveryCodeSet(salt: set.salt, hashes: [[1, 2, 3]])
        }
        #expect(throws: OneTimeCodeError(.invalidRecoveryCode)) { try RecoveryCodeSet.generate(count: 0) }
        #expect(throws: OneTimeCodeError(.invalidRecoveryCode)) { try RecoveryCodeSet.generate(count: 101) }
    }

    /// Symbols are uniform: over many codes every symbol of the 32 appears near 1/32 of the time.
    @Test func symbolsAreRoughlyUniform() throws {
        let (codes, _) = try RecoveryCodeSet.generate(count: 100)
        var counts: [Character: Int] = [:]
        for code in codes { for symbol in code where symbol != "-" { counts[symbol, default: 0] += 1 } }
        #expect(counts.count == 32)
        // 1600 symbols, expected 50 each; a bound of 15...100 fails only with negligible probability.
        #expect(counts.values.allSatisfy { (15...100).contains($0) })
    }
}
