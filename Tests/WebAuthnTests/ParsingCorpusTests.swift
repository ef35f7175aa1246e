import CBOR
import Foundation
import Testing

@testable import WebAuthn

/// Every real-authenticator response in the shared corpus must parse at the byte level (attestation object,
/// authenticator data, COSE key), except the cases the corpus marks as malformed.
struct ParsingCorpusTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let json: [String: any Sendable]
        var testDescription: String { name }
    }

    static func loadCases() -> [String] { RealCorpus.names }

    /// Cases the corpus expects to fail because their bytes are malformed (errorKind says so).
    static let malformed: Set<String> = [
        "webauthn-rs-firefox98-hello-truncated-aaguid-reg.json",
        "webauthn-rs-solokey-v2-invalid-ed25519-cbor-reg.json",
        "webauthn-rs-solokey-v2-packed-eddsa-reg.json",
    ]

    @Test(arguments: loadCases())
    func parses(_ file: String) throws {
        let data = try RealCorpus.data(file)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let response = try #require((object["response"] as? [String: Any])?["response"] as? [String: Any])
        let options = COSEKeyOptions(allowRS1: true)
        do {
            if let att = response["attestationObject"] as? String {
                let parsed = try AttestationObject(bytes: try Base64URL.decode(att), options: options)
                #expect(parsed.authenticatorData.attestedCredentialData != nil)
            } else {
                let authData = try #require(response["authenticatorData"] as? String)
                // Parsing accepts AT in an assertion (one macOS capture has it); the ceremony decides.
                _ = try AuthenticatorData(bytes: try Base64URL.decode(authData), options: options)
                if let key = object["credentialPublicKey"] as? String {
                    _ = try COSEKey(bytes: try Base64URL.decode(key), options: options)
                }
            }
            #expect(!Self.malformed.contains(file), "\(file) is malformed but parsed")
        } catch let error as WebAuthnError {
            // ML-DSA keys (AKP, kty 7) are not supported yet and must say so.
            if file.contains("mldsa") {
                #expect(error.code == .unsupportedAlgorithm)
            } else {
                #expect(Self.malformed.contains(file), "\(file): \(error)")
            }
        }
    }
}
