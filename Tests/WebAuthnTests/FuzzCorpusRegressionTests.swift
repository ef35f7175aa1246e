import CBOR
import Foundation
import Testing

@testable import WebAuthn

/// Replays the fuzzers' regression corpus (FuzzTesting/Corpus) through the same parsers without sanitizers, so
/// an input that once crashed keeps being exercised by `swift test`. Each input must either parse or throw a
/// typed error; reaching the end of the loop is the assertion, plus the invariants checked below.
struct FuzzCorpusRegressionTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzTesting/Corpus")

    static func inputs(_ target: String) -> [[UInt8]] {
        let dir = corpus.appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().compactMap { try? Array(Data(contentsOf: dir.appendingPathComponent($0))) }
    }

    @Test func cborCorpus() throws {
        let inputs = Self.inputs("FuzzCBOR")
        #expect(inputs.count > 10)
        for bytes in inputs {
            if let item = try? CBORDecoder(options: .ctap2).decode(bytes) {
                #expect(CBOREncoder.encode(item) == bytes)
            }
            if let item = try? CBORDecoder(options: .lenientMapOrder).decode(bytes) {
                let encoded = CBOREncoder.encode(item)
                #expect(CBOREncoder.encode(try CBORDecoder().decode(encoded)) == encoded)
            }
        }
    }

    @Test func authenticatorDataCorpus() {
        let inputs = Self.inputs("FuzzAuthenticatorData")
        #expect(inputs.count > 10)
        var parsed = 0
        for bytes in inputs {
            if let data = try? AuthenticatorData(bytes: bytes, options: COSEKeyOptions(allowRS1: true)) {
                #expect(data.bytes == bytes)
                parsed += 1
            }
        }
        #expect(parsed > 0)
    }

    /// A sign-in body: the assertion is its `credential` member.
    struct SignInBody: Decodable { let credential: AuthenticationResponseJSON }

    @Test func fastJSONCorpus() {
        let inputs = Self.inputs("FuzzFastJSON")
        #expect(inputs.count > 10)
        var assertions = 0
        for bytes in inputs {
            guard let value = JSONReader.read(bytes) else { continue }
            #expect((try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil)
            if let fast = AuthenticationResponseJSON(fastPath: value) {
                #expect(fast == (try? JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(bytes))))
                assertions += 1
            }
            if let inner = value["credential"], let fast = AuthenticationResponseJSON(fastPath: inner) {
                #expect(fast == (try? JSONDecoder().decode(SignInBody.self, from: Data(bytes)))?.credential)
                assertions += 1
            }
        }
        #expect(assertions > 10)
    }

    @Test func attestationObjectCorpus() {
        let inputs = Self.inputs("FuzzAttestationObject")
        #expect(inputs.count > 10)
        for bytes in inputs {
            _ = try? AttestationObject(bytes: bytes)
        }
    }

    @Test func providerIconCorpus() {
        let inputs = Self.inputs("FuzzProviderIcon")
        #expect(inputs.count >= 5)
        var kept = 0
        for bytes in inputs {
            if let icon = ProviderIcon(dataURI: "data:image/svg+xml;base64," + Data(bytes).base64EncodedString()) {
                let text = String(decoding: icon.bytes, as: UTF8.self).lowercased()
                #expect(!text.contains("<script") && !text.contains("<foreignobject") && !text.contains("onload"))
                kept += 1
            }
        }
        #expect(kept > 0)
    }

    @Test func tpmCorpus() {
        let inputs = Self.inputs("FuzzTPM")
        #expect(inputs.count >= 20)
        var attests = 0, publics = 0
        for bytes in inputs {
            if (try? TPMSAttest(bytes: bytes)) != nil { attests += 1 }
            if let pubArea = try? TPMTPublic(bytes: bytes) {
                #expect(pubArea.bytes == bytes)
                publics += 1
            }
        }
        // The seeds are real certInfo and pubArea structures: both parsers must read some.
        #expect(attests > 0 && publics > 0)
    }

    @Test func androidKeyDescriptionCorpus() {
        let inputs = Self.inputs("FuzzAndroidKeyDescription")
        #expect(inputs.count >= 5)
        #expect(inputs.contains { (try? AndroidKeyDescription(derEncoded: $0)) != nil })
    }

    @Test func jwsCorpus() {
        let inputs = Self.inputs("FuzzJWS")
        #expect(inputs.count >= 10)
        var signed = 0
        for bytes in inputs {
            guard let jws = try? CompactJWS(String(decoding: bytes, as: UTF8.self), maximumLength: 1 << 16) else {
                continue
            }
            if jws.signatureIsValid { signed += 1 }
            _ = try? jws.chain()
        }
        // Real SafetyNet responses and the MDS example BLOB carry valid signatures.
        #expect(signed > 0)
    }

    @Test func metadataCorpus() {
        let inputs = Self.inputs("FuzzMetadata")
        #expect(inputs.count >= 4)
        var payloads = 0, crls = 0
        for bytes in inputs {
            if let payload = try? MetadataBLOBPayload(json: bytes) {
                _ = try? MetadataIndex(entries: payload.entries)
                payloads += 1
            }
            if (try? CertificateRevocationList(derEncoded: bytes)) != nil { crls += 1 }
        }
        #expect(payloads > 0 && crls > 0)
    }
}
