import CBOR
import Crypto
import Foundation
import Testing

@testable import WebAuthn

/// Runs every snippet of `Sources/WebAuthn/WebAuthn.docc/GettingStarted.md`, and checks that each snippet still
/// appears verbatim in this file, so the article cannot drift from code that compiles and works.
@Suite struct GettingStartedTests {
    @Test func snippetsRun() async throws {
        // Configure the relying party
        var configuration = try RelyingPartyConfiguration(
            id: "example.org", name: "Example", origins: ["https://example.org"])
        configuration.signCount = .reject
        let relyingParty = RelyingParty(configuration: configuration)

        // Register a credential
        let userHandle = relyingParty.makeUserHandle()
        let creationOptions = relyingParty.makeCreationOptions(
            user: PublicKeyCredentialUserEntityJSON(id: userHandle, name: "ada@example.org", displayName: "Ada"))
        let creationJSON = try JSONEncoder().encode(creationOptions)

        let registrationBody = try TestBrowser().create(optionsJSON: creationJSON)

        let registration = try RegistrationResponseJSON.decode(registrationBody)
        let registered = try await relyingParty.verifyRegistration(
            response: registration, expected: RegistrationExpectation(options: creationOptions), now: Date())
        let credential: CredentialRecord = registered.credential

        #expect(credential.id == registration.rawId.bytes)

        // Sign in
        let requestOptions = relyingParty.makeRequestOptions()
        let requestJSON = try JSONEncoder().encode(requestOptions)

        let assertionBody = try TestBrowser().get(optionsJSON: requestJSON, userHandle: userHandle)

        let assertion = try AuthenticationResponseJSON.decode(assertionBody)
        let signedIn = try relyingParty.verifyAuthentication(
            response: assertion,
            expected: AuthenticationExpectation(
                options: requestOptions, credential: credential, userHandle: userHandle),
            now: Date())
        let updatedCredential = signedIn.updating(credential)

        #expect(updatedCredential.signCount == 1)

        // When verification fails
        var refusal: WebAuthnError?
        do {
            _ = try relyingParty.verifyAuthentication(
                response: assertion,
                expected: AuthenticationExpectation(
                    options: requestOptions, credential: updatedCredential, userHandle: userHandle),
                now: Date())
        } catch {
            refusal = error  // replaying the same assertion: signCountRegression, "7.2 step 22: signCount"
        }

        #expect(refusal?.code == .signCountRegression)
        #expect(refusal?.step == "7.2 step 22: signCount")
    }

    @Test func everySnippetIsMirroredHere() async throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/WebAuthn/WebAuthn.docc/GettingStarted.md"), encoding: .utf8
        )
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let normalizedSource = Self.normalize(source)
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        #expect(blocks.count == 6)
        for block in blocks {
            #expect(normalizedSource.contains(Self.normalize(block)), "snippet not mirrored in the test:\n\(block)")
        }
    }

    /// Lines without leading/trailing blanks, empty lines dropped.
    static func normalize(_ text: String) -> String {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .joined(separator: "\n")
    }
}

/// Plays the browser and authenticator for the article: answers options with the W3C none-ES256 vector's
/// credential (§16; its private key is published), using the challenge of the options it is given.
struct TestBrowser {
    let fixture: Fixture
    init() throws { fixture = try Fixture() }

    func create(optionsJSON: Data) throws -> Data {
        let options = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: optionsJSON)
        let clientData = Fixture.clientData(type: "webauthn.create", challenge: options.challenge.description)
        let response = try fixture.registration(clientData: clientData)
        return try JSONEncoder().encode(response)
    }

    func get(optionsJSON: Data, userHandle: [UInt8]) throws -> Data {
        let options = try JSONDecoder().decode(PublicKeyCredentialRequestOptionsJSON.self, from: optionsJSON)
        let clientData = Fixture.clientData(type: "webauthn.get", challenge: options.challenge.description)
        let response = try fixture.assertion(
            clientData: clientData, authData: Fixture.withCounter(fixture.authenticationAuthData, 1),
            userHandle: userHandle)
        return try JSONEncoder().encode(response)
    }
}
