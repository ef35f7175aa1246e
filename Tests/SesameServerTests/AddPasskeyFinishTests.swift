import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VirtualAuthenticator

@testable import SesameCore

/// Adding a passkey: the options step needs a recent authentication; the finish step is bound to those options
/// (same session, single use, `challengeTimeout`) and does not check the window again, so a ceremony begun inside
/// the window may end up to `challengeTimeout` after it (docs/server.md, "Re-authentication").
@Suite struct AddPasskeyFinishTests {
    static let window: TimeInterval = 600
    static let challengeTimeout: TimeInterval = 300

    func options(_ client: some TestClientProtocol, _ session: SignedIn) async throws -> TestResponse {
        try await client.json("/api/account/passkeys/options", .post, headers: session.bearerHeaders)
    }

    func finish(_ client: some TestClientProtocol, _ session: SignedIn, _ options: TestResponse) async throws
        -> TestResponse
    {
        let made = try VirtualAuthenticator().create(
            optionsJSON: Array(options.body.readableBytesView), origin: PasskeyJourneyTests.origin)
        return try await client.json(
            "/api/account/passkeys", .post, body: PasskeyJourneyTests().credentialBody(made.json),
            headers: session.bearerHeaders)
    }

    @Test(arguments: TestDatabase.all)
    func finishIsBoundToTheOptionsStep(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ivy", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "ivy", "correct horse")

            // Options inside the window, finish after it but before the challenge expires: added.
            server.clock.advance(Self.window - 10)
            let late = try await options(client, session)
            #expect(late.status == .ok)
            server.clock.advance(Self.challengeTimeout - 20)
            #expect(try await finish(client, session, late).status == .created)

            // Outside the window the options step is refused, so no new finish can start.
            #expect(try await options(client, session).errorCode == "reauthentication_required")

            // A fresh session: options whose challenge has expired cannot finish.
            let fresh = try await signInWithPassword(client, "ivy", "correct horse")
            let expired = try await options(client, fresh)
            server.clock.advance(Self.challengeTimeout + 1)
            let refused = try await finish(client, fresh, expired)
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "challenge_invalid")

            // Options of one session cannot be finished by another session of the same account.
            let a = try await signInWithPassword(client, "ivy", "correct horse")
            let b = try await signInWithPassword(client, "ivy", "correct horse")
            let fromA = try await options(client, a)
            #expect(try await finish(client, b, fromA).errorCode == "challenge_invalid")

            // A session signed out between the steps cannot finish.
            let c = try await signInWithPassword(client, "ivy", "correct horse")
            let fromC = try await options(client, c)
            #expect(try await client.json("/api/session", .delete, headers: c.bearerHeaders).status == .ok)
            #expect(try await finish(client, c, fromC).status == .unauthorized)

            let list = try await client.json("/api/account/passkeys", headers: a.bearerHeaders)
            #expect((try JSONSerialization.jsonObject(with: Data(list.text.utf8)) as? [Any])?.count == 1)
        }
    }

    /// The automatic upgrade after a password sign-in: options asked with `"mediation": "conditional"` accept a
    /// response without the UP (and UV) flag (a conditional create saves the passkey without a prompt); options asked
    /// without it refuse such a response, and the refused challenge stays spent.
    @Test(arguments: TestDatabase.all)
    func onlyConditionalOptionsAcceptAResponseWithoutUserPresence(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("jun", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "jun", "correct horse")
            // Chrome documents that a conditional create answers with neither UP nor UV set.
            var silent = VirtualAuthenticator.Behaviour()
            silent.userPresent = false
            silent.userVerified = false
            func add(_ options: TestResponse, _ authenticator: VirtualAuthenticator) async throws -> TestResponse {
                let made = try authenticator.create(
                    optionsJSON: Array(options.body.readableBytesView), origin: PasskeyJourneyTests.origin,
                    behaviour: silent)
                return try await client.json(
                    "/api/account/passkeys", .post, body: PasskeyJourneyTests().credentialBody(made.json),
                    headers: session.bearerHeaders)
            }

            let modal = try await options(client, session)
            let refused = try await add(modal, VirtualAuthenticator())
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == "registration_failed")
            #expect(refused.text.contains("userPresenceRequired"))

            let conditional = try await client.json(
                "/api/account/passkeys/options", .post, body: #"{"mediation":"conditional"}"#,
                headers: session.bearerHeaders)
            #expect(conditional.status == .ok)
            let selection = conditional.object["authenticatorSelection"] as? [String: Any]
            #expect(selection?["residentKey"] as? String == "required")
            let authenticator = VirtualAuthenticator()
            #expect(try await add(conditional, authenticator).status == .created)
            // The same challenge cannot be used twice.
            #expect(try await add(conditional, authenticator).errorCode == "challenge_invalid")

            let list = try await client.json("/api/account/passkeys", headers: session.bearerHeaders)
            #expect((try JSONSerialization.jsonObject(with: Data(list.text.utf8)) as? [Any])?.count == 1)

            for body in [
                #"{"mediation":"silent"}"#, #"{"mediation":""}"#, #"{"kind":"security-key","mediation":"conditional"}"#,
            ] {
                let bad = try await client.json(
                    "/api/account/passkeys/options", .post, body: body, headers: session.bearerHeaders)
                #expect(bad.status == .badRequest, "\(body)")
                #expect(bad.errorCode == "invalid_mediation", "\(body)")
            }
        }
    }
}
