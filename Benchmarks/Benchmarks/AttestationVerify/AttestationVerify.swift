import Benchmark
import CBOR
import Crypto
import CryptoExtras
import Foundation
import Synchronization
import WebAuthn
import X509

// Registration verification of attested formats beside the raw signature check each one rests on, in one run, on
// real captures from the corpus copy in Tests/WebAuthnTests/Vectors/webauthn-real (each file names its source):
//
//   packed x5c   yubico-yubikey-5-nfc-reg: ES256 attestation signature by the x5c leaf, chain to Yubico's root
//   tpm          py-webauthn-surface-pro-4-intel-tpm-reg: RS1 signature over certInfo by the AIK, pubArea and
//                certInfo parsing, AIK certificate rules, chain to the Microsoft TPM root
//   ML-DSA-65    yubico-mldsa65-reg: packed x5c (ES256) registration of an ML-DSA-65 credential key (1952-byte AKP
//                key parsed); yubico-mldsa65-auth: the ML-DSA-65 assertion signature through COSEKey vs raw
//
//   raw:        the attestation (or assertion) signature alone, with a swift-crypto key made once from the leaf
//               certificate; what a verifier that skipped every other check would pay at least
//   ceremony:   RelyingParty.verifyRegistration, every §7.1 step from the parsed response JSON, with the case's
//               trust anchors (chain building and validation included)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 20,
        maxDuration: .seconds(3),
        maxIterations: 100_000
    )

    let cases: [RegistrationFixture]
    let mldsa: AssertionFixture
    do {
        cases = try [
            RegistrationFixture(name: "packed-x5c", file: "yubico-yubikey-5-nfc-reg"),
            RegistrationFixture(name: "tpm", file: "py-webauthn-surface-pro-4-intel-tpm-reg"),
            RegistrationFixture(name: "mldsa65-key packed-x5c", file: "yubico-mldsa65-reg"),
        ]
        mldsa = try AssertionFixture(file: "yubico-mldsa65-auth")
    } catch {
        fatalError("benchmark fixtures could not be read: \(error)")
    }

    for fixture in cases {
        Benchmark("raw attestation signature \(fixture.name)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.raw.verify())
            }
        }
        Benchmark("ceremony verifyRegistration \(fixture.name)") { benchmark async in
            for _ in benchmark.scaledIterations {
                blackHole(
                    try? await fixture.relyingParty.verifyRegistration(
                        response: fixture.response, expected: fixture.expectation, now: fixture.now))
            }
        }
    }

    Benchmark("raw signature verify mldsa65") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mldsa.key.isValidSignature(mldsa.signature, for: mldsa.signedData))
        }
    }
    Benchmark("COSEKey.verify mldsa65") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(mldsa.coseKey.isValidSignature(mldsa.signature, over: mldsa.signedData))
        }
    }
}

/// The corpus copy beside the tests, found from this file's path (the benchmarks run from the checkout).
enum Corpus {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/WebAuthnTests/Vectors/webauthn-real")

    static func read(_ file: String) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent("\(file).json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw WebAuthnError(.invalidConfiguration, detail: "\(file) is not a corpus case")
        }
        return object
    }
}

/// The signature a statement rests on, checked with a key made once: ES256 by the x5c leaf over
/// authenticatorData || clientDataHash (packed), or RS1 by the AIK over certInfo (tpm).
enum RawAttestation: Sendable {
    case p256(P256.Signing.PublicKey, P256.Signing.ECDSASignature, [UInt8])
    case rsaSHA1(_RSA.Signing.PublicKey, _RSA.Signing.RSASignature, Insecure.SHA1Digest)

    func verify() -> Bool {
        switch self {
        case .p256(let key, let signature, let data):
            return key.isValidSignature(signature, for: data)
        case .rsaSHA1(let key, let signature, let digest):
            return key.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5)
        }
    }
}

struct RegistrationFixture: Sendable {
    let name: String
    let relyingParty: RelyingParty
    let response: RegistrationResponseJSON
    let expectation: RegistrationExpectation
    let now: Date
    let raw: RawAttestation

    init(name: String, file: String) throws {
        self.name = name
        let json = try Corpus.read(file)
        guard let rpId = json["rpId"] as? String, let origin = json["origin"] as? String,
            let challenge = json["challenge"] as? String, let responseObject = json["response"]
        else { throw WebAuthnError(.invalidConfiguration, detail: "\(file): missing fields") }
        now = (json["verificationTime"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) } ?? Date()
        var configuration = try RelyingPartyConfiguration(id: rpId, name: "Bench", origins: [origin])
        let anchors = try ((json["trustAnchorsPEM"] as? [String]) ?? []).flatMap {
            try AttestationTrust.certificates(fromPEM: $0)
        }
        configuration.attestationTrust = AttestationTrust(
            trustAnchors: anchors, verificationTime: now, allowSHA1Signatures: true)
        relyingParty = RelyingParty(configuration: configuration)
        response = try RegistrationResponseJSON.decode(
            Array(try JSONSerialization.data(withJSONObject: responseObject)))
        expectation = RegistrationExpectation(
            challenge: try Base64URL.decode(challenge),
            allowedAlgorithms: [.es256, .rs256, .edDSA, .mldsa65, .mldsa87, .ps256, .es384, .es512])

        // The statement's own signature, with the leaf's key.
        let object = try CBORDecoder(options: .lenientMapOrder).decode(response.response.attestationObject.bytes)
        guard let statement = object[text: "attStmt"], let sig = statement[text: "sig"]?.bytes,
            let leafDER = statement[text: "x5c"]?.array?.first?.bytes, let authData = object[text: "authData"]?.bytes,
            let format = object[text: "fmt"]?.string
        else { throw WebAuthnError(.invalidConfiguration, detail: "\(file): not an x5c statement") }
        let leaf = try Certificate(derEncoded: leafDER)
        let clientDataHash = Array(SHA256.hash(data: response.response.clientDataJSON.bytes))
        switch format {
        case "tpm":
            guard let certInfo = statement[text: "certInfo"]?.bytes else {
                throw WebAuthnError(.invalidConfiguration, detail: "\(file): no certInfo")
            }
            guard let key = _RSA.Signing.PublicKey(leaf.publicKey) else {
                throw WebAuthnError(.invalidConfiguration, detail: "\(file): AIK key is not RSA")
            }
            raw = .rsaSHA1(key, _RSA.Signing.RSASignature(rawRepresentation: sig), Insecure.SHA1.hash(data: certInfo))
        default:
            guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
                throw WebAuthnError(.invalidConfiguration, detail: "\(file): leaf key is not P-256")
            }
            raw = .p256(key, try P256.Signing.ECDSASignature(derRepresentation: sig), authData + clientDataHash)
        }
        // Every measured path must succeed, or the loop would time the failure path.
        guard raw.verify() else { throw WebAuthnError(.invalidSignature, detail: "\(file): raw check fails") }
        try Self.wait { [relyingParty, response, expectation, now] in
            _ = try await relyingParty.verifyRegistration(response: response, expected: expectation, now: now)
        }
    }

    /// The set-up is synchronous; `verifyRegistration` is async.
    static func wait(_ body: @escaping @Sendable () async throws -> Void) throws {
        let failure = Mutex<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do { try await body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

/// An ML-DSA-65 assertion: the signature over authenticatorData || SHA-256(clientDataJSON).
struct AssertionFixture: Sendable {
    let key: MLDSA65.PublicKey
    let coseKey: COSEKey
    let signature: [UInt8]
    let signedData: [UInt8]

    init(file: String) throws {
        let json = try Corpus.read(file)
        guard let cose = json["credentialPublicKey"] as? String, let response = json["response"] as? [String: Any],
            let inner = response["response"] as? [String: String], let signature = inner["signature"],
            let authData = inner["authenticatorData"], let clientData = inner["clientDataJSON"]
        else { throw WebAuthnError(.invalidConfiguration, detail: "\(file): missing fields") }
        let coseBytes = try Base64URL.decode(cose)
        coseKey = try COSEKey(bytes: coseBytes)
        guard let pub = try CBORDecoder(options: .lenientMapOrder).decode(coseBytes)[int: -1]?.bytes else {
            throw WebAuthnError(.invalidConfiguration, detail: "\(file): no AKP pub")
        }
        key = try MLDSA65.PublicKey(rawRepresentation: pub)
        self.signature = try Base64URL.decode(signature)
        signedData = try Base64URL.decode(authData) + Array(SHA256.hash(data: try Base64URL.decode(clientData)))
        guard key.isValidSignature(self.signature, for: signedData),
            coseKey.isValidSignature(self.signature, over: signedData)
        else { throw WebAuthnError(.invalidSignature, detail: "\(file): assertion does not verify") }
    }
}
