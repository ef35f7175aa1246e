import Foundation
import Testing
import WebAuthn

@testable import Keychain

/// The `largeBlob` extension (W3C WebAuthn L3 §10.1.5): supported at registration, written and read at sign-in,
/// kept in the passkey item (so it survives a save and syncs), and the browser's refusals.
@Suite struct LargeBlobTests {
    let origin = "https://login.example.com"
    typealias Inputs = AuthenticationExtensionsClientInputsJSON.LargeBlobInputs
    typealias Outputs = AuthenticationExtensionsClientOutputsJSON.LargeBlobOutputs

    func register(_ keychain: Keychain, _ rp: RelyingParty, largeBlob: Inputs?) throws -> ([UInt8], Outputs?) {
        var options = creationOptions(rp)
        options.extensions = AuthenticationExtensionsClientInputsJSON(largeBlob: largeBlob)
        let made = try keychain.createPasskey(optionsJSON: json(options), origin: origin, suffixes: suffixes)
        let response = try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data(made.responseJSON))
        guard case .passkey(let p) = made.item.content else { return ([], nil) }
        return (p.credentialId, response.clientExtensionResults.largeBlob)
    }

    func signIn(_ keychain: Keychain, _ rp: RelyingParty, _ largeBlob: Inputs, allow: [[UInt8]] = []) throws
        -> Outputs?
    {
        let request = rp.makeRequestOptions(
            allowCredentials: allow.map { PublicKeyCredentialDescriptorJSON(id: $0) },
            extensions: AuthenticationExtensionsClientInputsJSON(largeBlob: largeBlob))
        let assertion = try keychain.signIn(optionsJSON: json(request), origin: origin, suffixes: suffixes)
        return try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(assertion.responseJSON))
            .clientExtensionResults.largeBlob
    }

    @Test func writtenThenReadAcrossASaveAndASync() async throws {
        let dir = TemporaryDirectory()
        let server = InMemorySyncTransport()
        let (a, b, _) = try await enrolledPair(dir, transport: server)
        let rp = try relyingParty()
        let blob = Array("a certificate, say".utf8)
        try await using(a) { keychain in
            let (id, made) = try register(keychain, rp, largeBlob: Inputs(support: .required))
            #expect(made == Outputs(supported: true))
            #expect(try signIn(keychain, rp, Inputs(read: true)) == Outputs())  // nothing stored yet
            #expect(try signIn(keychain, rp, Inputs(write: blob), allow: [id]) == Outputs(written: true))
            let tooBig = [UInt8](repeating: 1, count: Passkey.largeBlobMaximum + 1)
            #expect(try signIn(keychain, rp, Inputs(write: tooBig), allow: [id]) == Outputs(written: false))
        }
        #expect(try signIn(open(a), rp, Inputs(read: true))?.blob?.bytes == blob)
        try await sync(a, server)
        try await sync(b, server)
        #expect(try signIn(open(b), rp, Inputs(read: true))?.blob?.bytes == blob)
    }

    @Test func refusalsAreTheBrowsers() throws {
        let dir = TemporaryDirectory()
        let (keychain, _) = try makeVault(dir.vault)
        let rp = try relyingParty()
        #expect(errorCode { _ = try register(keychain, rp, largeBlob: Inputs(read: true)) } == .extensionNotSupported)
        let (id, _) = try register(keychain, rp, largeBlob: nil)
        #expect(errorCode { _ = try signIn(keychain, rp, Inputs(support: .preferred)) } == .extensionNotSupported)
        #expect(
            errorCode { _ = try signIn(keychain, rp, Inputs(read: true, write: [1]), allow: [id]) }
                == .extensionNotSupported)
        // A write must name exactly one credential.
        #expect(errorCode { _ = try signIn(keychain, rp, Inputs(write: [1])) } == .extensionNotSupported)
        #expect(
            errorCode { _ = try signIn(keychain, rp, Inputs(write: [1]), allow: [id, [9, 9]]) }
                == .extensionNotSupported)
    }

    @Test func concurrentWritesMergeLikeAnyField() throws {
        var base = Passkey(
            rpId: "example.com", credentialId: [1], userHandle: [2], userName: "a", displayName: "A",
            algorithm: .es256, privateKey: CredentialKey.generate(.es256).rawPrivateKey)
        let item = try KeychainItem(content: .passkey(base), created: Date(timeIntervalSince1970: 0))
        base.largeBlob = [7]
        var changed = item
        changed.content = .passkey(base)
        changed.modified = Date(timeIntervalSince1970: 10)
        let merged = Merge.merge(base: item, local: item, remote: changed, now: Date(timeIntervalSince1970: 20))
        guard case .passkey(let p) = merged.merged.content else { return }
        #expect(p.largeBlob == [7])
        #expect(merged.conflictCopy == nil)
        #expect(try ItemCoding.decode(ItemCoding.encode(merged.merged)) == merged.merged)
    }
}
