import Foundation
import Testing

@testable import WebAuthn

/// Single-bit flips and truncations of real responses: every one is either refused with a `WebAuthnError` or, for
/// unsigned registration bytes, accepted; nothing crashes. For assertions every flip in signed bytes is refused.
@Suite struct MutationTests {
    static func flip(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var b = bytes
        guard !b.isEmpty else { return b }
        let i = Int.random(in: 0..<b.count, using: &rng)
        b[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
        return b
    }

    @Test func everyBitFlipInAnAssertionIsRefused() async throws {
        let f = try Fixture()
        let record = try await f.record
        let good = try f.assertion()
        let expectation = f.authenticationExpectation(record: record)
        _ = try f.authenticate(good, expectation)
        var rng = SplitMix64(state: 0x5e5a)
        for round in 0..<600 {
            var r = good
            switch round % 3 {
            case 0: r.response.authenticatorData.bytes = Self.flip(r.response.authenticatorData.bytes, &rng)
            case 1: r.response.clientDataJSON.bytes = Self.flip(r.response.clientDataJSON.bytes, &rng)
            default: r.response.signature.bytes = Self.flip(r.response.signature.bytes, &rng)
            }
            #expect(throws: WebAuthnError.self, "round \(round)") { try f.authenticate(r, expectation) }
        }
    }

    @Test func registrationMutationsNeverCrash() async throws {
        let f = try Fixture()
        let good = try f.registration()
        var rng = SplitMix64(state: 0xc0ffee)
        var refused = 0
        for round in 0..<600 {
            var r = good
            switch round % 3 {
            case 0: r.response.attestationObject.bytes = Self.flip(r.response.attestationObject.bytes, &rng)
            case 1: r.response.clientDataJSON.bytes = Self.flip(r.response.clientDataJSON.bytes, &rng)
            default:
                let b = r.response.attestationObject.bytes
                r.response.attestationObject.bytes = Array(b.prefix(Int.random(in: 0..<b.count, using: &rng)))
            }
            do { _ = try await f.register(r) } catch { refused += 1 }
        }
        // Most flips break something; a few land in unsigned, unchecked bytes (e.g. clientData's extraData).
        #expect(refused > 450)
    }
}
