import CBOR
import Crypto
import Foundation
import Testing
import WebAuthn

@testable import Keychain

/// The keychain as an authenticator, checked with Sesame's relying-party library (the Python peers check the same
/// responses in Tests/Interop/test_keychain_cli.py) and by reading the bytes directly.
@Suite struct AuthenticatorTests {
    let origin = "https://login.example.com"

    func register(
        _ keychain: Keychain, _ rp: RelyingParty, options: PublicKeyCredentialCreationOptionsJSON,
        algorithm: PasskeyAlgorithm? = nil
    ) async throws -> (RegistrationResult, PasskeyRegistration) {
        let registration = try keychain.createPasskey(
            optionsJSON: json(options), origin: origin, suffixes: suffixes, preferredAlgorithm: algorithm)
        let response = try RegistrationResponseJSON.decode(registration.responseJSON)
        let result = try await rp.verifyRegistration(
            response: response, expected: RegistrationExpectation(options: options), now: Date())
        return (result, registration)
    }

    @Test func registrationVerifiesAndCarriesTheKeychainsFlags() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let options = creationOptions(rp)
        let (result, registration) = try await register(keychain, rp, options: options)
        let record = result.credential
        #expect(record.signCount == 0)
        #expect(record.backupEligible && record.backupState)
        #expect(record.uvInitialized)
        #expect(record.aaguid?.bytes == KeychainProvider.aaguid)
        #expect(result.credential.attestationFormat == "none")
        #expect(result.publicKey.algorithm == .es256)
        guard case .passkey(let passkey) = registration.item.content else { Issue.record("not a passkey"); return }
        #expect(passkey.credentialId == record.id)
        #expect(passkey.rpId == "example.com")
        #expect(passkey.userHandle == options.user.id.bytes)
        #expect(keychain.items.count == 1)

        // The raw response: attestation "none", flags UP UV BE BS AT, sign count 0, client data as a browser writes it.
        let parsed = try JSONSerialization.jsonObject(with: Data(registration.responseJSON)) as! [String: Any]
        let response = parsed["response"] as! [String: Any]
        let attestation = try CBORDecoder().decode(try Base64URL.decode(response["attestationObject"] as! String))
        #expect(attestation[text: "fmt"] == .textString("none"))
        #expect(attestation[text: "attStmt"] == .map([]))
        let authData = attestation[text: "authData"]!.bytes!
        #expect(authData[32] == 0x01 | 0x04 | 0x08 | 0x10 | 0x40)
        #expect(Array(authData[33..<37]) == [0, 0, 0, 0])
        #expect(Array(authData[37..<53]) == KeychainProvider.aaguid)
        let clientData = String(decoding: try Base64URL.decode(response["clientDataJSON"] as! String), as: UTF8.self)
        #expect(clientData.hasPrefix("{\"type\":\"webauthn.create\",\"challenge\":\""))
        #expect(clientData.hasSuffix(",\"origin\":\"https://login.example.com\",\"crossOrigin\":false}"))
        #expect(parsed["authenticatorAttachment"] as? String == "platform")
        #expect((parsed["clientExtensionResults"] as? [String: Any])?["credProps"] as? [String: Bool] == ["rk": true])
    }

    @Test func edDSAWhenAskedOrWhenTheOnlyChoice() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let (asked, _) = try await register(
            keychain, rp, options: creationOptions(rp, userHandle: [1]), algorithm: .edDSA)
        #expect(asked.publicKey.algorithm == .edDSA)
        let (only, _) = try await register(
            keychain, rp, options: creationOptions(rp, userHandle: [2], algorithms: [.edDSA]))
        #expect(only.publicKey.algorithm == .edDSA)
        let (preferred, _) = try await register(
            keychain, rp, options: creationOptions(rp, userHandle: [3], algorithms: [.edDSA, .es256]))
        #expect(preferred.publicKey.algorithm == .es256)
        #expect(
            errorCode {
                _ = try keychain.createPasskey(
                    optionsJSON: json(creationOptions(rp, algorithms: [.rs256])), origin: origin, suffixes: suffixes)
            }
                == .algorithmNotSupported)
        #expect(
            errorCode {
                _ = try keychain.createPasskey(
                    optionsJSON: json(creationOptions(rp, algorithms: [.es256])), origin: origin, suffixes: suffixes,
                    preferredAlgorithm: .edDSA)
            } == .algorithmNotSupported)
    }

    @Test func signInVerifiesWithAndWithoutAllowList() async throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        let (keychain, _) = try makeVault(dir.vault, clock: clock)
        let rp = try relyingParty()
        let options = creationOptions(rp)
        let (registered, _) = try await register(keychain, rp, options: options)
        for allow in [[], [registered.credential.id]] {
            clock.advance(10)
            let request = rp.makeRequestOptions(
                allowCredentials: allow.map { PublicKeyCredentialDescriptorJSON(id: $0) })
            let assertion = try keychain.signIn(optionsJSON: json(request), origin: origin, suffixes: suffixes)
            let response = try AuthenticationResponseJSON.decode(assertion.responseJSON)
            let result = try rp.verifyAuthentication(
                response: response,
                expected: AuthenticationExpectation(
                    options: request, credential: registered.credential, userHandle: options.user.id.bytes),
                now: Date())
            #expect(result.signCount == 0)
            #expect(response.response.userHandle?.bytes == options.user.id.bytes)
            guard case .passkey(let p) = keychain.item(id: assertion.item.id)!.content else { return }
            #expect(p.lastUsed == clock.now)
        }
    }

    @Test func edDSASignInVerifies() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let options = creationOptions(rp)
        let (registered, _) = try await register(keychain, rp, options: options, algorithm: .edDSA)
        let request = rp.makeRequestOptions()
        let assertion = try keychain.signIn(optionsJSON: json(request), origin: origin, suffixes: suffixes)
        _ = try rp.verifyAuthentication(
            response: try AuthenticationResponseJSON.decode(assertion.responseJSON),
            expected: AuthenticationExpectation(
                options: request, credential: registered.credential, userHandle: options.user.id.bytes),
            now: Date())
    }

    @Test func excludeCredentialsIsInvalidState() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let (registered, _) = try await register(keychain, rp, options: creationOptions(rp))
        let before = keychain.items
        #expect(
            errorCode {
                _ = try keychain.createPasskey(
                    optionsJSON: json(creationOptions(rp, userHandle: [9], exclude: [registered.credential.id])),
                    origin: origin,
                    suffixes: suffixes)
            } == .credentialExcluded)
        #expect(keychain.items == before)
    }

    @Test func aNewPasskeyReplacesTheOneForTheSameUser() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        _ = try await register(keychain, rp, options: creationOptions(rp))
        let (second, _) = try await register(keychain, rp, options: creationOptions(rp))
        let passkeys = keychain.items.filter { $0.kind == .passkey }
        #expect(passkeys.count == 1)
        guard case .passkey(let p) = passkeys[0].content else { return }
        #expect(p.credentialId == second.credential.id)
    }

    @Test func userVerificationFollowsTheUnlockWindow() async throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        _ = try makeVault(dir.vault, clock: clock)
        try unlockBriefly(dir.vault, clock: clock)
        let rp = try relyingParty()
        do {
            let keychain = try open(dir.vault, passphrase: nil, clock: clock)
            _ = try await register(keychain, rp, options: creationOptions(rp, userVerification: .required))
            try keychain.save()
        }
        clock.advance(120)
        let keychain = try open(dir.vault, passphrase: nil, clock: clock)
        #expect(!keychain.userVerified)
        // "required" is refused; "preferred" signs without the UV flag.
        let required = rp.makeRequestOptions(userVerification: .required)
        #expect(
            errorCode { _ = try keychain.signIn(optionsJSON: json(required), origin: origin, suffixes: suffixes) }
                == .userVerificationRequired)
        let preferred = rp.makeRequestOptions(userVerification: .preferred)
        let assertion = try keychain.signIn(optionsJSON: json(preferred), origin: origin, suffixes: suffixes)
        let response = try AuthenticationResponseJSON.decode(assertion.responseJSON)
        #expect(response.response.authenticatorData.bytes[32] & 0x04 == 0)
        #expect(response.response.authenticatorData.bytes[32] & 0x19 == 0x19)
        #expect(!assertion.userVerified)
    }

    @Test func originAndRPIDAreCheckedAgainstTheSuffixList() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let options = json(creationOptions(rp))
        #expect(
            errorCode {
                _ = try keychain.createPasskey(optionsJSON: options, origin: "https://evil.example", suffixes: suffixes)
            } == .rpIdNotAllowed)
        #expect(
            errorCode {
                _ = try keychain.createPasskey(
                    optionsJSON: options, origin: "http://login.example.com", suffixes: suffixes)
            } == .invalidOrigin)
        let com = try relyingParty(id: "com", origin: origin)
        #expect(
            errorCode {
                _ = try keychain.createPasskey(
                    optionsJSON: json(creationOptions(com)), origin: origin, suffixes: suffixes)
            }
                == .rpIdNotAllowed)
        #expect(keychain.items.isEmpty)
    }

    @Test func signInRefusals() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        _ = try await register(keychain, rp, options: creationOptions(rp, userHandle: [1], name: "alice"))
        _ = try await register(keychain, rp, options: creationOptions(rp, userHandle: [2], name: "bob"))
        let request = json(rp.makeRequestOptions())
        #expect(
            errorCode { _ = try keychain.signIn(optionsJSON: request, origin: origin, suffixes: suffixes) }
                == .ambiguousCredential)
        let bob = try keychain.signIn(optionsJSON: request, origin: origin, suffixes: suffixes, userName: "bob")
        guard case .passkey(let p) = bob.item.content else { return }
        #expect(p.userName == "bob")
        let unknown = json(rp.makeRequestOptions(allowCredentials: [PublicKeyCredentialDescriptorJSON(id: [1, 2, 3])]))
        #expect(
            errorCode { _ = try keychain.signIn(optionsJSON: unknown, origin: origin, suffixes: suffixes) }
                == .noCredential)
        let other = try relyingParty(id: "other.example", origin: "https://other.example")
        #expect(
            errorCode {
                _ = try keychain.signIn(
                    optionsJSON: json(other.makeRequestOptions()), origin: "https://other.example", suffixes: suffixes)
            }
                == .noCredential)
        #expect(
            errorCode { _ = try keychain.signIn(optionsJSON: Array("{}".utf8), origin: origin, suffixes: suffixes) }
                == .invalidOptions)
        #expect(
            errorCode {
                _ = try keychain.signIn(optionsJSON: Array("not json".utf8), origin: origin, suffixes: suffixes)
            } == .invalidOptions)
    }

    @Test func wrappedOptionsAreRead() async throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let options = creationOptions(rp)
        let wrapped = Array("{\"publicKey\":".utf8) + json(options) + Array("}".utf8)
        _ = try keychain.createPasskey(optionsJSON: wrapped, origin: origin, suffixes: suffixes)
        #expect(keychain.items.count == 1)
    }

    @Test func passkeysSurviveTheVaultFile() async throws {
        let dir = TemporaryDirectory()
        let rp = try relyingParty()
        let options = creationOptions(rp)
        let credential: CredentialRecord
        do {
            let (keychain, _) = try makeVault(dir.vault)
            credential = try await register(keychain, rp, options: options).0.credential
            try keychain.save()
        }
        let keychain = try open(dir.vault)
        let request = rp.makeRequestOptions()
        let assertion = try keychain.signIn(optionsJSON: json(request), origin: origin, suffixes: suffixes)
        _ = try rp.verifyAuthentication(
            response: try AuthenticationResponseJSON.decode(assertion.responseJSON),
            expected: AuthenticationExpectation(
                options: request, credential: credential, userHandle: options.user.id.bytes),
            now: Date())
    }
}
