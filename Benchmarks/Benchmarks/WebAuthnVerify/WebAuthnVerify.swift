import Benchmark
import Crypto
import CryptoExtras
import Foundation
import Synchronization
import VirtualAuthenticator
import WebAuthn

// Authentication verification against raw signature verification, with the same keys and the same signed bytes,
// in one run. Each fixture is one credential made by the VirtualAuthenticator and one assertion it signed.
//
//   raw:     parse the signature, verify it over authenticatorData || SHA-256(clientDataJSON) with a swift-crypto
//            key made once (what a hand-written verifier that trusted everything else would do at least)
//   cosekey: the library's COSEKey, parsed once, verifying the same signature
//   ceremony: RelyingParty.verifyAuthentication, every §7.2 step, on the parsed AuthenticationResponseJSON with
//            the stored credential's key parsed once (as a server caching keys by credential ID does)
//   ceremony from JSON: the same, starting from the response's JSON bytes and the stored COSE key bytes (JSON
//            decoding, base64url, client data, authenticator data and COSE key parsing all in the loop)
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

        // Two of the ceremony's parts on their own, to show where its time beyond the signature goes.
        if algorithm == .es256 {
            Benchmark("part: client data parse") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(try? CollectedClientData(bytes: fixture.assertion.clientDataJSON))
                }
            }
            Benchmark("part: authenticator data parse") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(try? AuthenticatorData(bytes: fixture.assertion.authenticatorData))
                }
            }
        }

        Benchmark("ceremony verifyAuthentication \(algorithm)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(
                    try? fixture.relyingParty.verifyAuthentication(
                        response: fixture.response, expected: fixture.cachedKeyExpectation, now: fixture.now))
            }
        }

        Benchmark("ceremony from JSON \(algorithm)") { benchmark in
            for _ in benchmark.scaledIterations {
                guard let response = try? AuthenticationResponseJSON.decode(fixture.assertion.json) else { continue }
                blackHole(
                    try? fixture.relyingParty.verifyAuthentication(
                        response: response, expected: fixture.expectation, now: fixture.now))
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
    let relyingParty: RelyingParty
    let response: AuthenticationResponseJSON
    let expectation: AuthenticationExpectation
    let cachedKeyExpectation: AuthenticationExpectation
    let now: Date

    static let origin = "https://login.example.com"
    static let rpId = "example.com"

    init(_ algorithm: VirtualAuthenticator.Algorithm) throws {
        self.algorithm = algorithm
        var configuration = try RelyingPartyConfiguration(id: Self.rpId, name: "Bench", origins: [Self.origin])
        configuration.userVerification = .required
        relyingParty = RelyingParty(configuration: configuration)
        now = Date()

        // Register through the library, so the stored record is the one a server would keep.
        let authenticator = VirtualAuthenticator(configuration: .init(algorithms: [algorithm]))
        let user = PublicKeyCredentialUserEntityJSON(id: relyingParty.makeUserHandle(), name: "b", displayName: "B")
        let creation = relyingParty.makeCreationOptions(user: user, residentKey: .required)
        let created = try authenticator.create(optionsJSON: Array(JSONEncoder().encode(creation)), origin: Self.origin)
        let record = try Self.register(relyingParty, created, creation, now: now).credential
        let credential = authenticator.credentials[0]

        let request = relyingParty.makeRequestOptions()
        optionsJSON = Array(try JSONEncoder().encode(request))
        assertion = try authenticator.get(optionsJSON: optionsJSON, origin: Self.origin)
        response = try AuthenticationResponseJSON.decode(assertion.json)
        expectation = AuthenticationExpectation(options: request, credential: record, userHandle: user.id.bytes)
        var cached = expectation
        cached.publicKey = try COSEKey(bytes: record.publicKey)
        cachedKeyExpectation = cached
        publicKeySPKI = credential.publicKeySPKI
        publicKeyCOSE = credential.publicKeyCOSE
        coseKey = try COSEKey(bytes: publicKeyCOSE)
        signature = assertion.signature
        signedData = assertion.authenticatorData + Array(SHA256.hash(data: assertion.clientDataJSON))
        raw = try RawKey(algorithm: algorithm, spki: publicKeySPKI)
        guard rawVerify(), coseKey.isValidSignature(signature, over: signedData) else {
            throw WebAuthnError(.invalidSignature, detail: "benchmark fixture does not verify")
        }
        // Every measured path must succeed, or the loop would time the failure path.
        _ = try relyingParty.verifyAuthentication(response: response, expected: cachedKeyExpectation, now: now)
        _ = try relyingParty.verifyAuthentication(
            response: try AuthenticationResponseJSON.decode(assertion.json), expected: expectation, now: now)
    }

    /// `verifyRegistration` is async; the benchmark set-up is not, so it waits on a detached task.
    private static func register(
        _ rp: RelyingParty, _ created: RegistrationResponse, _ options: PublicKeyCredentialCreationOptionsJSON,
        now: Date
    ) throws -> RegistrationResult {
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let response = try RegistrationResponseJSON.decode(created.json)
                box.set(
                    .success(
                        try await rp.verifyRegistration(
                            response: response, expected: RegistrationExpectation(options: options), now: now)))
            } catch {
                box.set(.failure(error))
            }
            done.signal()
        }
        done.wait()
        return try box.get()
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

/// Hands a registration result from the detached task back to the synchronous set-up.
final class ResultBox: Sendable {
    private let result = Mutex<Result<RegistrationResult, any Error>?>(nil)

    func set(_ value: Result<RegistrationResult, any Error>) { result.withLock { $0 = value } }

    func get() throws -> RegistrationResult {
        guard let value = result.withLock({ $0 }) else {
            throw WebAuthnError(.invalidConfiguration, detail: "registration did not finish")
        }
        return try value.get()
    }
}
