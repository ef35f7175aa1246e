import Crypto
import Foundation
import Testing
import WebAuthn

@testable import Keychain

/// The `prf` extension (W3C WebAuthn L3 §10.1.4) as the keychain answers it: outputs computed here from the
/// passkey's stored secret with the salt derivation §10.1.4 gives, stable across sign-ins, saves, sync and CXF,
/// distinct per credential, and the refusals a browser gives.
@Suite struct PRFTests {
    let origin = "https://login.example.com"
    typealias Values = AuthenticationExtensionsClientInputsJSON.PRFValues
    typealias Inputs = AuthenticationExtensionsClientInputsJSON.PRFInputs

    /// The expected output, computed independently of ``PRFExtension``: HMAC-SHA-256 over
    /// SHA-256("WebAuthn PRF" || 0x00 || input).
    static func expected(_ secret: [UInt8], _ input: [UInt8]) -> [UInt8] {
        var salt = SHA256()
        salt.update(data: Array("WebAuthn PRF".utf8))
        salt.update(data: [0])
        salt.update(data: input)
        let hashed = Array(salt.finalize())
        return Array(HMAC<SHA256>.authenticationCode(for: hashed, using: SymmetricKey(data: secret)))
    }

    static func outputs(_ responseJSON: [UInt8]) throws -> AuthenticationExtensionsClientOutputsJSON.PRFOutputs? {
        try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(responseJSON)).clientExtensionResults.prf
    }

    func register(
        _ keychain: Keychain, _ rp: RelyingParty, user: [UInt8] = Array(repeating: 7, count: 16),
        prf: Inputs? = Inputs()
    ) throws -> (credentialId: [UInt8], secret: [UInt8], prf: AuthenticationExtensionsClientOutputsJSON.PRFOutputs?) {
        var options = creationOptions(rp, userHandle: user, name: "user\(user[0])")
        options.extensions = AuthenticationExtensionsClientInputsJSON(prf: prf)
        let registration = try keychain.createPasskey(optionsJSON: json(options), origin: origin, suffixes: suffixes)
        guard case .passkey(let p) = registration.item.content, let secret = p.hmacSecret else {
            Issue.record("no HMAC secret on a new passkey")
            return ([], [], nil)
        }
        let response = try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data(registration.responseJSON))
        return (p.credentialId, secret.withUV, response.clientExtensionResults.prf)
    }

    func signIn(
        _ keychain: Keychain, _ rp: RelyingParty, prf: Inputs, allow: [[UInt8]] = [], pick: [UInt8]? = nil,
        userVerification: UserVerificationRequirement? = nil
    ) throws -> AuthenticationExtensionsClientOutputsJSON.PRFOutputs? {
        let request = rp.makeRequestOptions(
            allowCredentials: allow.map { PublicKeyCredentialDescriptorJSON(id: $0) },
            userVerification: userVerification,
            extensions: AuthenticationExtensionsClientInputsJSON(prf: prf))
        let assertion = try keychain.signIn(
            optionsJSON: json(request), origin: origin, suffixes: suffixes, credentialId: pick)
        return try Self.outputs(assertion.responseJSON)
    }

    let salt1: [UInt8] = Array("first salt".utf8)
    let salt2: [UInt8] = Array("second salt".utf8)

    @Test func outputsFollowTheSaltDerivationAndRepeat() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let made = try register(keychain, rp)
        #expect(made.prf?.enabled == true)
        #expect(made.prf?.results == nil)
        let inputs = Inputs(eval: Values(first: salt1, second: salt2))
        let one = try signIn(keychain, rp, prf: inputs)
        let two = try signIn(keychain, rp, prf: inputs)
        #expect(one?.results?.first.bytes == Self.expected(made.secret, salt1))
        #expect(one?.results?.second?.bytes == Self.expected(made.secret, salt2))
        #expect(one?.results?.first.bytes.count == 32)
        #expect(one == two)
        #expect(one?.results?.first != one?.results?.second)
        // Only `first`: no `second` in the output.
        let onlyFirst = try signIn(keychain, rp, prf: Inputs(eval: Values(first: salt1)))
        #expect(onlyFirst?.results?.first == one?.results?.first)
        #expect(onlyFirst?.results?.second == nil)
        // No prf input: no prf output.
        let request = rp.makeRequestOptions()
        let plain = try keychain.signIn(optionsJSON: json(request), origin: origin, suffixes: suffixes)
        #expect(try Self.outputs(plain.responseJSON) == nil)
    }

    @Test func evalAtCreationMatchesEvalAtSignIn() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let made = try register(keychain, rp, prf: Inputs(eval: Values(first: salt1, second: salt2)))
        #expect(made.prf?.enabled == true)
        #expect(made.prf?.results?.first.bytes == Self.expected(made.secret, salt1))
        let later = try signIn(keychain, rp, prf: Inputs(eval: Values(first: salt1, second: salt2)))
        #expect(later?.results == made.prf?.results)
    }

    @Test func differentCredentialsGiveDifferentOutputsAndEvalByCredentialPicksByID() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let a = try register(keychain, rp, user: [1])
        let b = try register(keychain, rp, user: [2])
        let same = Inputs(eval: Values(first: salt1))
        let fromA = try signIn(keychain, rp, prf: same, pick: a.credentialId)
        let fromB = try signIn(keychain, rp, prf: same, pick: b.credentialId)
        #expect(fromA?.results?.first != fromB?.results?.first)

        let byCredential = Inputs(
            eval: Values(first: salt2),
            evalByCredential: [Base64URL.encode(a.credentialId): Values(first: salt1)])
        let allow = [a.credentialId, b.credentialId]
        // A has its own entry; B falls back to `eval`.
        let pickedA = try signIn(keychain, rp, prf: byCredential, allow: allow, pick: a.credentialId)
        #expect(pickedA?.results?.first.bytes == Self.expected(a.secret, salt1))
        let pickedB = try signIn(keychain, rp, prf: byCredential, allow: allow, pick: b.credentialId)
        #expect(pickedB?.results?.first.bytes == Self.expected(b.secret, salt2))
        // Without `eval`, a credential with no entry gets an empty prf output.
        let onlyA = Inputs(evalByCredential: [Base64URL.encode(a.credentialId): Values(first: salt1)])
        let noneForB = try signIn(keychain, rp, prf: onlyA, allow: allow, pick: b.credentialId)
        #expect(noneForB != nil && noneForB?.results == nil)
    }

    @Test func refusalsAreTheBrowsers() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        let made = try register(keychain, rp)
        let id = Base64URL.encode(made.credentialId)
        // evalByCredential at registration: NotSupportedError.
        #expect(
            errorCode {
                _ = try register(keychain, rp, user: [9], prf: Inputs(evalByCredential: [id: Values(first: salt1)]))
            } == .extensionNotSupported)
        // evalByCredential without allowCredentials: NotSupportedError.
        #expect(
            errorCode { _ = try signIn(keychain, rp, prf: Inputs(evalByCredential: [id: Values(first: salt1)])) }
                == .extensionNotSupported)
        // Keys that are empty, not base64url, or not in allowCredentials: SyntaxError.
        for key in ["", "not base64url!", Base64URL.encode([1, 2, 3])] {
            #expect(
                errorCode {
                    _ = try signIn(
                        keychain, rp, prf: Inputs(evalByCredential: [key: Values(first: salt1)]),
                        allow: [made.credentialId])
                } == .invalidExtensionInput)
        }
        #expect(NativeHost.domExceptionName(for: .extensionNotSupported) == "NotSupportedError")
        #expect(NativeHost.domExceptionName(for: .invalidExtensionInput) == "SyntaxError")
    }

    @Test func evaluatingNeedsARecentUnlock() async throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock()
        _ = try makeVault(dir.vault, clock: clock)
        try unlockBriefly(dir.vault, clock: clock)
        let rp = try relyingParty()
        do {
            let keychain = try open(dir.vault, passphrase: nil, clock: clock)
            _ = try register(keychain, rp)
            try keychain.save()
        }
        clock.advance(120)
        let keychain = try open(dir.vault, passphrase: nil, clock: clock)
        #expect(!keychain.userVerified)
        // The PRF is the user-verified one (§10.1.4): evaluating it makes verification required.
        #expect(
            errorCode {
                _ = try signIn(
                    keychain, rp, prf: Inputs(eval: Values(first: salt1)), userVerification: .discouraged)
            } == .userVerificationRequired)
        // Asking for prf with nothing to evaluate signs in as before.
        #expect(try signIn(keychain, rp, prf: Inputs()) == AuthenticationExtensionsClientOutputsJSON.PRFOutputs())
    }

    @Test func passkeysWithoutASecretReportNoResults() throws {
        let dir = TemporaryDirectory()
        let rp = try relyingParty()
        do {
            let (keychain, _) = try makeVault(dir.vault)
            // A passkey as the keychain made them before it answered prf: no HMAC secret.
            let key = CredentialKey.generate(.es256)
            let old = Passkey(
                rpId: "example.com", credentialId: [1, 2, 3, 4], userHandle: [5], userName: "old", displayName: "Old",
                algorithm: .es256, privateKey: key.rawPrivateKey)
            _ = try keychain.add(.passkey(old))
            try keychain.save()
        }
        let reopened = try open(dir.vault)
        let prf = try signIn(reopened, rp, prf: Inputs(eval: Values(first: salt1, second: salt2)))
        #expect(prf != nil)
        #expect(prf?.results == nil)
        #expect(prf?.enabled == nil)
    }

    @Test func theSecretSurvivesSaveReopenAndCXF() throws {
        let dir = TemporaryDirectory()
        let rp = try relyingParty()
        let inputs = Inputs(eval: Values(first: salt1, second: salt2))
        let before: AuthenticationExtensionsClientOutputsJSON.PRFOutputs?
        let exported: [UInt8]
        do {
            let (keychain, _) = try makeVault(dir.vault)
            _ = try register(keychain, rp)
            before = try signIn(keychain, rp, prf: inputs)
            try keychain.save()
        }
        do {
            let keychain = try open(dir.vault)
            #expect(try signIn(keychain, rp, prf: inputs) == before)
            let (json, _) = keychain.exportCXF(exporterRpId: "keychain.example")
            exported = json
            let text = String(decoding: json, as: UTF8.self)
            #expect(text.contains("\"hmacCredentials\""))
            #expect(text.contains("\"hmac-sha256\""))
        }
        let (other, _) = try makeVault(dir.sub("other"))
        let report = try other.importCXF(exported)
        #expect(report.failures.isEmpty)
        #expect(try signIn(other, rp, prf: inputs) == before)
    }

    @Test func cxfHMACCredentialsOfTheWrongShapeFailThePasskey() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        _ = try register(keychain, rp)
        let (json, _) = keychain.exportCXF(exporterRpId: "keychain.example")
        let text = String(decoding: json, as: UTF8.self).replacingOccurrences(of: "hmac-sha256", with: "hmac-md5")
        let (other, _) = try makeVault(dir.sub("other"))
        let report = try other.importCXF(Array(text.utf8))
        #expect(report.failures.count == 1)
        #expect(other.items.isEmpty)
    }

    @Test func syncedDevicesGiveTheSameOutputs() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        let rp = try relyingParty()
        let inputs = Inputs(eval: Values(first: salt1, second: salt2))
        let onA = try await using(a) { keychain in
            _ = try register(keychain, rp)
            return try signIn(keychain, rp, prf: inputs)
        }
        try await sync(a, server)
        try await sync(b, server)
        let onB = try await using(b) { keychain in try signIn(keychain, rp, prf: inputs) }
        #expect(onB?.results != nil)
        #expect(onB == onA)
    }
}
