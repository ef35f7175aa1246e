import Crypto
import CryptoExtras
import Foundation
import Testing
import X509

@testable import WebAuthn

/// Builds compact JWS strings for tests.
enum TestJWS {
    static func header(alg: String, certificates: [Certificate], extra: String = "") throws -> String {
        let x5c = try certificates.map { "\"\(Data(try der($0)).base64EncodedString())\"" }.joined(separator: ",")
        return "{\"alg\":\"\(alg)\",\"x5c\":[\(x5c)]\(extra)}"
    }

    /// `header.payload.signature`, the signature made over the signing input by `sign`.
    static func make(header: String, payload: [UInt8], sign: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    static func es256(_ key: P256.Signing.PrivateKey, certificates: [Certificate], payload: [UInt8], extra: String = "")
        throws -> String
    {
        try make(header: try header(alg: "ES256", certificates: certificates, extra: extra), payload: payload) {
            Array(try key.signature(for: $0).rawRepresentation)
        }
    }
}

@Suite struct CompactJWSTests {
    let key = P256.Signing.PrivateKey()
    let certificate: Certificate
    let payload = Array(#"{"no":1}"#.utf8)

    init() throws {
        let root = try TestCA.root("JWS Test Root")
        certificate = try root.issue(
            subject: try DistinguishedName { CommonName("signer") }, key: key.publicKey, extensions: [])
    }

    @Test func es256Verifies() throws {
        let jws = try CompactJWS(
            try TestJWS.es256(key, certificates: [certificate], payload: payload), maximumLength: 4096)
        #expect(jws.algorithm == .es256 && jws.payload == payload)
        #expect(try jws.chain() == [certificate])
        #expect(jws.signatureIsValid)
    }

    @Test(arguments: ["RS256", "PS256"])
    func rsaAlgorithmsVerify(_ alg: String) throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let root = try TestCA.root("RSA Root")
        let signer = try root.issue(
            subject: try DistinguishedName { CommonName("rsa signer") }, publicKey: .init(rsa.publicKey), extensions: []
        )
        let text = try TestJWS.make(header: try TestJWS.header(alg: alg, certificates: [signer]), payload: payload) {
            Array(
                try rsa.signature(for: SHA256.hash(data: $0), padding: alg == "RS256" ? .insecurePKCS1v1_5 : .PSS)
                    .rawRepresentation)
        }
        let jws = try CompactJWS(text, maximumLength: 4096)
        #expect(jws.signatureIsValid)
        // The other RSA padding does not verify the same signature.
        let other = alg == "RS256" ? "PS256" : "RS256"
        let parts = text.split(separator: ".")
        let swapped =
            Base64URL.encode(Array(try TestJWS.header(alg: other, certificates: [signer]).utf8)) + "." + parts[1] + "."
            + parts[2]
        #expect(!(try CompactJWS(swapped, maximumLength: 4096)).signatureIsValid)
    }

    /// RFC 7518 §3.4: ES256 is the 64-byte R ‖ S, not DER.
    @Test func derECDSASignatureIsRefused() throws {
        let text = try TestJWS.make(
            header: try TestJWS.header(alg: "ES256", certificates: [certificate]), payload: payload
        ) {
            Array(try key.signature(for: $0).derRepresentation)
        }
        #expect(!(try CompactJWS(text, maximumLength: 4096)).signatureIsValid)
    }

    @Test func tamperedPayloadDoesNotVerify() throws {
        let text = try TestJWS.es256(key, certificates: [certificate], payload: payload)
        let parts = text.split(separator: ".")
        let tampered = parts[0] + "." + Base64URL.encode(Array(#"{"no":2}"#.utf8)) + "." + parts[2]
        #expect(!(try CompactJWS(tampered, maximumLength: 4096)).signatureIsValid)
    }

    @Test func keyMustFitTheAlgorithm() throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let root = try TestCA.root("RSA Root")
        let signer = try root.issue(
            subject: try DistinguishedName { CommonName("rsa") }, publicKey: .init(rsa.publicKey), extensions: [])
        let text = try TestJWS.es256(key, certificates: [signer], payload: payload)
        #expect(!(try CompactJWS(text, maximumLength: 4096)).signatureIsValid)
    }

    /// Each malformed input is `.invalidJWS`.
    @Test func malformedInputsAreRefused() throws {
        let good = try TestJWS.es256(key, certificates: [certificate], payload: payload)
        let parts = good.split(separator: ".").map(String.init)
        let cert64 = Data(try der(certificate)).base64EncodedString()
        func header(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }
        let cases: [String] = [
            parts[0] + "." + parts[1],  // two parts
            good + ".x",  // four parts
            parts[0] + ".." + parts[2],  // empty payload part
            parts[0] + "=." + parts[1] + "." + parts[2],  // padding
            header(#"{"alg":"none","x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"HS256","x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256"}"#) + "." + parts[1] + "." + parts[2],  // no x5c
            header(#"{"alg":"ES256","x5c":[]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","alg":"ES256","x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","\u0061lg":"ES256","x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","crit":["exp"],"x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","jku":"https://example.com","x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "."
                + parts[2],
            header(#"{"alg":"ES256","x5c":[""# + String(cert64.dropLast()) + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","x5c":[" "# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","x5c":["AAAA"]}"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","x5c":[""# + cert64 + #"",""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
            header(#"["alg"]"#) + "." + parts[1] + "." + parts[2],
            header(#"{"alg":"ES256","typ":1,"x5c":[""# + cert64 + #""]}"#) + "." + parts[1] + "." + parts[2],
        ]
        for (index, text) in cases.enumerated() {
            #expect(throws: WebAuthnError(.invalidJWS), "case \(index)") {
                _ = try CompactJWS(text, maximumLength: 1 << 16)
            }
        }
        #expect(throws: WebAuthnError(.invalidJWS)) { _ = try CompactJWS(good, maximumLength: good.utf8.count - 1) }
        // typ, kid and x5t are allowed.
        let extra = try TestJWS.es256(
            key, certificates: [certificate], payload: payload, extra: #","typ":"JWT","kid":"k1""#)
        #expect(try CompactJWS(extra, maximumLength: 4096).type == "JWT")
    }

    /// A later x5c entry that is base64 but not a certificate leaves the signature checkable and fails `chain()`,
    /// so that callers report a chain failure, not a malformed JWS (the conformance MDS BLOB with a bad chain).
    @Test func unreadableLaterEntryFailsOnlyTheChain() throws {
        let cert64 = Data(try der(certificate)).base64EncodedString()
        let text = try TestJWS.make(header: #"{"alg":"ES256","x5c":[""# + cert64 + #"","AAAA"]}"#, payload: payload) {
            Array(try key.signature(for: $0).rawRepresentation)
        }
        let jws = try CompactJWS(text, maximumLength: 1 << 16)
        #expect(jws.signatureIsValid && jws.signer == certificate)
        #expect(throws: WebAuthnError(.invalidJWS)) { _ = try jws.chain() }
        // x5c[0] itself must be a certificate.
        let badSigner = try TestJWS.make(header: #"{"alg":"ES256","x5c":["AAAA"]}"#, payload: payload) {
            Array(try key.signature(for: $0).rawRepresentation)
        }
        #expect(throws: WebAuthnError(.invalidJWS)) { _ = try CompactJWS(badSigner, maximumLength: 1 << 16) }
    }

    @Test func memberNameScanner() {
        #expect(JSONMemberNames.topLevel(Array(#"{"a":{"b":1},"c":[{"d":2}],"e":"}"}"#.utf8))?.count == 3)
        #expect(JSONMemberNames.topLevel(Array(#"{"a\"b":1}"#.utf8)) == [Array(#"a\"b"#.utf8)])
        #expect(JSONMemberNames.topLevel(Array(#"{}{}"#.utf8)) == nil)
        #expect(JSONMemberNames.topLevel(Array(#"{"a":"#.utf8)) == nil)
        #expect(JSONMemberNames.topLevel(Array(#"{"a"#.utf8)) == nil)
        #expect(JSONMemberNames.topLevel(Array(#"[1]"#.utf8)) == nil)
    }
}
