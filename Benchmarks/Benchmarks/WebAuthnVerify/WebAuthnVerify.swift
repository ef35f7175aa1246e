import Benchmark
import Crypto
import CryptoExtras
import Foundation
import VirtualAuthenticator
import WebAuthn

// Authentication verification against raw signature verification, with the same keys and the same signed bytes,
// in one run. Each fixture is one credential made by the VirtualAuthenticator and one assertion it signed.
//
//   raw:     parse the signature, verify it over authenticatorData || SHA-256(clientDataJSON) with a swift-crypto
//            key made once (what a hand-written verifier that trusted everything else would do at least)
//   cosekey: the library's COSEKey, parsed once, verifying the same signature
//
// Goal (issue 2): the full ceremony at ≥ 85% of the raw ES256 throughput.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        warmupIterations: 100,
        maxDuration: .seconds(3),
        maxIterations: 200_000
    )

    for algorithm in VirtualAuthenticator.Algorithm.allCases {
        let fixture: Fixture
        do {
            fixture = try Fixture(algorithm)
        } catch {
            fatalError("benchmark fixture for \(algorithm) could not be made: \(error)")
        }

        Benchmark("raw signature verify \(algorithm)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.rawVerify())
            }
        }

        Benchmark("COSEKey.verify \(algorithm)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(fixture.coseKey.isValidSignature(fixture.signature, over: fixture.signedData))
            }
        }
    }
}

/// One credential and one assertion, with everything the verifiers need precomputed outside the measured loop.
struct Fixture: Sendable {
    let algorithm: VirtualAuthenticator.Algorithm
    let optionsJSON: [UInt8]
    let assertion: AuthenticationResponse
    let publicKeySPKI: [UInt8]
    let publicKeyCOSE: [UInt8]
    let coseKey: COSEKey
    let signature: [UInt8]
    /// authenticatorData || SHA-256(clientDataJSON)
    let signedData: [UInt8]
    let raw: RawKey

    static let origin = "https://login.example.com"
    static let rpId = "example.com"

    init(_ algorithm: VirtualAuthenticator.Algorithm) throws {
        self.algorithm = algorithm
        let authenticator = VirtualAuthenticator(configuration: .init(algorithms: [algorithm]))
        let creation = """
            {"rp":{"id":"\(Self.rpId)","name":"Bench"},"user":{"id":"AQIDBA","name":"b","displayName":"B"},
             "challenge":"\(Base64URL.encode([UInt8](repeating: 7, count: 32)))",
             "pubKeyCredParams":[{"type":"public-key","alg":\(algorithm.rawValue)}],
             "authenticatorSelection":{"residentKey":"required","userVerification":"required"}}
            """
        _ = try authenticator.create(optionsJSON: Array(creation.utf8), origin: Self.origin)
        let credential = authenticator.credentials[0]
        optionsJSON = Array(
            """
            {"challenge":"\(Base64URL.encode([UInt8](repeating: 9, count: 32)))","rpId":"\(Self.rpId)",
             "userVerification":"required"}
            """.utf8)
        assertion = try authenticator.get(optionsJSON: optionsJSON, origin: Self.origin)
        publicKeySPKI = credential.publicKeySPKI
        publicKeyCOSE = credential.publicKeyCOSE
        coseKey = try COSEKey(bytes: publicKeyCOSE)
        signature = assertion.signature
        signedData = assertion.authenticatorData + Array(SHA256.hash(data: assertion.clientDataJSON))
        raw = try RawKey(algorithm: algorithm, spki: publicKeySPKI)
        guard rawVerify(), coseKey.isValidSignature(signature, over: signedData) else {
            throw WebAuthnError(.invalidSignature, detail: "benchmark fixture does not verify")
        }
    }

    func rawVerify() -> Bool {
        switch raw {
        case .p256(let key):
            guard let sig = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(sig, for: signedData)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: signedData)
        case .rsa(let key):
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: signedData, padding: .insecurePKCS1v1_5)
        }
    }
}

enum RawKey: Sendable {
    case p256(P256.Signing.PublicKey)
    case ed25519(Curve25519.Signing.PublicKey)
    case rsa(_RSA.Signing.PublicKey)

    init(algorithm: VirtualAuthenticator.Algorithm, spki: [UInt8]) throws {
        switch algorithm {
        case .es256: self = .p256(try P256.Signing.PublicKey(derRepresentation: spki))
        case .edDSA: self = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: spki.suffix(32)))
        case .rs256: self = .rsa(try _RSA.Signing.PublicKey(derRepresentation: spki))
        }
    }
}
