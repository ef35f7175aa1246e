import Foundation
import Testing
import VirtualAuthenticator

@testable import WebAuthn

/// Ceremonies against `VirtualAuthenticator` (the project's software authenticator and client, which parses
/// options and writes responses independently of this library): every algorithm, attestation and discoverability
/// combination registers and signs in, and each deviation the authenticator can make is refused at its step.
@Suite struct VirtualAuthenticatorCeremonyTests {
    static let origin = "https://sesame.example"

    static func relyingParty(_ change: (inout RelyingPartyConfiguration) throws -> Void = { _ in }) throws
        -> RelyingParty
    {
        var config = try RelyingPartyConfiguration(id: "sesame.example", name: "Sesame", origins: [origin])
        // The post-quantum algorithms are offered only on opt-in; these tests opt in so every algorithm is covered.
        config.algorithms += RelyingPartyConfiguration.postQuantumAlgorithms
        try change(&config)
        return RelyingParty(configuration: config)
    }

    struct Combination: Sendable, CustomTestStringConvertible {
        let algorithm: VirtualAuthenticator.Algorithm
        let attestation: VirtualAuthenticator.Attestation
        let discoverable: Bool
        let signCounter: Bool
        var testDescription: String { "\(algorithm) \(attestation.rawValue) rk=\(discoverable) counter=\(signCounter)" }
    }

    static let combinations: [Combination] = VirtualAuthenticator.Algorithm.allCases.flatMap { alg in
        VirtualAuthenticator.Attestation.allCases.flatMap { att in
            [(true, true), (false, false), (true, false)].map {
                Combination(algorithm: alg, attestation: att, discoverable: $0.0, signCounter: $0.1)
            }
        }
    }

    static let user = PublicKeyCredentialUserEntityJSON(
        id: Array("sesame-user-0001".utf8), name: "ada", displayName: "Ada")

    @Test(arguments: combinations)
    func registersAndSignsIn(_ c: Combination) async throws {
        let authenticator = VirtualAuthenticator(
            configuration: .init(algorithms: [c.algorithm], signCounter: c.signCounter, attestation: c.attestation))
        let rp = try Self.relyingParty()
        let options = rp.makeCreationOptions(user: Self.user, residentKey: c.discoverable ? .required : .discouraged)
        let created = try authenticator.create(optionsJSON: Array(JSONEncoder().encode(options)), origin: Self.origin)
        let registration = try RegistrationResponseJSON.decode(created.json)
        let registered = try await rp.verifyRegistration(
            response: registration, expected: RegistrationExpectation(options: options), now: Date())
        #expect(registered.publicKey.algorithm.rawValue == c.algorithm.rawValue)
        #expect(registered.attestation.format == c.attestation.rawValue)
        #expect(registered.attestation.type == (c.attestation == .none ? .none : .self))
        #expect(registered.credential.aaguid?.bytes == VirtualAuthenticator.defaultAAGUID)

        var record = registered.credential
        var previous = record.signCount
        for _ in 0..<2 {
            let request = rp.makeRequestOptions(
                allowCredentials: c.discoverable ? [] : [PublicKeyCredentialDescriptorJSON(id: record.id)])
            let asserted = try authenticator.get(optionsJSON: Array(JSONEncoder().encode(request)), origin: Self.origin)
            let assertion = try AuthenticationResponseJSON.decode(asserted.json)
            let result = try rp.verifyAuthentication(
                response: assertion,
                expected: AuthenticationExpectation(
                    options: request, credential: record, userHandle: Self.user.id.bytes),
                now: Date())
            #expect(!result.cloneWarning)
            if c.signCounter { #expect(result.signCount > previous) } else { #expect(result.signCount == 0) }
            record = result.updating(record)
            previous = record.signCount
        }
    }

    struct Deviation: Sendable, CustomTestStringConvertible {
        let name: String
        let registration: Bool
        let behaviour: VirtualAuthenticator.Behaviour
        let code: WebAuthnError.Code
        let step: String
        var testDescription: String { name }
    }

    static func behaviour(_ change: (inout VirtualAuthenticator.Behaviour) -> Void) -> VirtualAuthenticator.Behaviour {
        var b = VirtualAuthenticator.Behaviour()
        change(&b)
        return b
    }

    static let deviations: [Deviation] = [
        .init(
            name: "create: wrong type", registration: true, behaviour: behaviour { $0.clientDataType = "webauthn.get" },
            code: .clientDataTypeMismatch, step: "7.1 step 7"),
        .init(
            name: "create: challenge", registration: true, behaviour: behaviour { $0.tamperChallenge = true },
            code: .challengeMismatch, step: "7.1 step 8"),
        .init(
            name: "create: origin", registration: true,
            behaviour: behaviour { $0.clientDataOrigin = "https://evil.example" }, code: .originNotAllowed,
            step: "7.1 step 9"),
        .init(
            name: "create: crossOrigin", registration: true, behaviour: behaviour { $0.crossOrigin = true },
            code: .crossOriginNotAllowed, step: "7.1 step 10"),
        .init(
            name: "create: rpIdHash", registration: true, behaviour: behaviour { $0.rpIdForHash = "evil.example" },
            code: .rpIdHashMismatch, step: "7.1 step 14"),
        .init(
            name: "create: no UP", registration: true, behaviour: behaviour { $0.userPresent = false },
            code: .userPresenceRequired, step: "7.1 step 15"),
        .init(
            name: "create: BS without BE", registration: true, behaviour: behaviour { $0.flagsXOR = 0x10 },
            code: .backupStateInvalid, step: "7.1 step 17"),
        .init(
            name: "create: id not rawId", registration: true,
            behaviour: behaviour { $0.responseCredentialId = [1, 2, 3, 4] }, code: .credentialIdMismatch,
            step: "7.1 step 13"),
        .init(
            name: "get: wrong type", registration: false,
            behaviour: behaviour { $0.clientDataType = "webauthn.create" }, code: .clientDataTypeMismatch,
            step: "7.2 step 10"),
        .init(
            name: "get: challenge", registration: false, behaviour: behaviour { $0.tamperChallenge = true },
            code: .challengeMismatch, step: "7.2 step 11"),
        .init(
            name: "get: origin", registration: false,
            behaviour: behaviour { $0.clientDataOrigin = "https://sesame.example.evil" }, code: .originNotAllowed,
            step: "7.2 step 12"),
        .init(
            name: "get: crossOrigin", registration: false,
            behaviour: behaviour {
                $0.crossOrigin = true; $0.topOrigin = "https://top.example"
            }, code: .crossOriginNotAllowed, step: "7.2 step 13"),
        .init(
            name: "get: rpIdHash", registration: false, behaviour: behaviour { $0.rpIdForHash = "other.example" },
            code: .rpIdHashMismatch, step: "7.2 step 15"),
        .init(
            name: "get: no UP", registration: false, behaviour: behaviour { $0.userPresent = false },
            code: .userPresenceRequired, step: "7.2 step 16"),
        .init(
            name: "get: BS without BE", registration: false, behaviour: behaviour { $0.flagsXOR = 0x10 },
            code: .backupStateInvalid, step: "7.2 step 18"),
        .init(
            name: "get: BE appears", registration: false, behaviour: behaviour { $0.flagsXOR = 0x08 },
            code: .backupEligibilityChanged, step: "7.2 step 19"),
        .init(
            name: "get: counter regression", registration: false, behaviour: behaviour { $0.signCount = 0 },
            code: .signCountRegression, step: "7.2 step 22"),
        .init(
            name: "get: other user handle", registration: false,
            behaviour: behaviour { $0.userHandle = .bytes(Array("mallory".utf8)) }, code: .userHandleMismatch,
            step: "7.2 step 6"),
        .init(
            name: "get: no user handle, no allow list", registration: false,
            behaviour: behaviour { $0.userHandle = .omitted }, code: .userHandleMissing, step: "7.2 step 6"),
        .init(
            name: "get: authenticator data byte", registration: false,
            behaviour: behaviour { $0.tamper = [.authenticatorData(at: 34)] }, code: .invalidSignature,
            step: "7.2 step 21"),
        .init(
            name: "get: signature byte", registration: false, behaviour: behaviour { $0.tamper = [.signature(at: 20)] },
            code: .invalidSignature, step: "7.2 step 21"),
        .init(
            name: "get: id not rawId", registration: false,
            behaviour: behaviour { $0.responseCredentialId = [9, 9, 9, 9] }, code: .credentialIdMismatch,
            step: "7.2 step 6"),
    ]

    @Test(arguments: deviations)
    func deviationIsRefused(_ d: Deviation) async throws {
        let authenticator = VirtualAuthenticator(configuration: .init(algorithms: [.es256], signCounter: true))
        let rp = try Self.relyingParty()
        let options = rp.makeCreationOptions(user: Self.user, residentKey: .required)
        let optionsJSON = Array(try JSONEncoder().encode(options))
        if d.registration {
            let created = try authenticator.create(
                optionsJSON: optionsJSON, origin: Self.origin, behaviour: d.behaviour)
            let response = try RegistrationResponseJSON.decode(created.json)
            await expectError(d.code, step: d.step) {
                _ = try await rp.verifyRegistration(
                    response: response, expected: RegistrationExpectation(options: options), now: Date())
            }
            return
        }
        let created = try authenticator.create(optionsJSON: optionsJSON, origin: Self.origin)
        let record = try await rp.verifyRegistration(
            response: try RegistrationResponseJSON.decode(created.json),
            expected: RegistrationExpectation(options: options),
            now: Date()
        ).credential
        // First sign-in moves the counter past 0, so a reported 0 is a regression.
        let first = rp.makeRequestOptions()
        let ok = try authenticator.get(optionsJSON: Array(JSONEncoder().encode(first)), origin: Self.origin)
        let updated = try rp.verifyAuthentication(
            response: try AuthenticationResponseJSON.decode(ok.json),
            expected: AuthenticationExpectation(options: first, credential: record, userHandle: Self.user.id.bytes),
            now: Date()
        ).updating(record)
        let request = rp.makeRequestOptions()
        let asserted = try authenticator.get(
            optionsJSON: Array(JSONEncoder().encode(request)), origin: Self.origin, behaviour: d.behaviour)
        let response = try AuthenticationResponseJSON.decode(asserted.json)
        expectError(d.code, step: d.step) {
            _ = try rp.verifyAuthentication(
                response: response,
                expected: AuthenticationExpectation(
                    options: request, credential: updated, userHandle: Self.user.id.bytes),
                now: Date())
        }
    }

    @Test func conditionalCreateWithoutUserPresence() async throws {
        let authenticator = VirtualAuthenticator()
        let rp = try Self.relyingParty()
        let options = rp.makeCreationOptions(user: Self.user)
        var b = VirtualAuthenticator.Behaviour()
        b.userPresent = false
        let created = try authenticator.create(
            optionsJSON: Array(JSONEncoder().encode(options)), origin: Self.origin, behaviour: b)
        let response = try RegistrationResponseJSON.decode(created.json)
        let result = try await rp.verifyRegistration(
            response: response, expected: RegistrationExpectation(options: options, mediation: .conditional),
            now: Date())
        #expect(!result.flags.contains(.userPresent))
    }

    @Test func userVerificationRequired() async throws {
        let rp = try Self.relyingParty { $0.userVerification = .required }
        let options = rp.makeCreationOptions(user: Self.user)
        var b = VirtualAuthenticator.Behaviour()
        b.userVerified = false
        let created = try VirtualAuthenticator().create(
            optionsJSON: Array(JSONEncoder().encode(options)), origin: Self.origin, behaviour: b)
        let response = try RegistrationResponseJSON.decode(created.json)
        await expectError(.userVerificationRequired, step: "7.1 step 16") {
            _ = try await rp.verifyRegistration(
                response: response, expected: RegistrationExpectation(options: options), now: Date())
        }
    }
}
