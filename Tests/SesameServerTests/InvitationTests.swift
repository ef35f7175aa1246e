import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import VirtualAuthenticator

@testable import SesameServer
@testable import SesameCore
@testable import SesamePasskeys
@testable import SesameInvitations
@testable import SesameOperations

/// Who may sign up (`signUp`) and sign-up by invitation over HTTP, on both engines: closed and invite-only refuse
/// with their codes while `sesame users create` still works; an invitation signs up once, joins its groups in the
/// account's transaction and writes its mail to the outbox with it; used, revoked, expired, wrong and malformed
/// invitations get one answer and nothing is created; wrong guesses are rate limited.
@Suite struct InvitationTests {
    static let ceremony = HTTPField.Name("Sesame-Ceremony")!

    static func server(_ db: TestDatabase, signUp: SignUpPolicy, groups: MemoryAccountGroups) -> TestServer {
        var server = TestServer(db) { $0.signUp = signUp }
        server.accountGroups = groups
        // The outbox's sender stays idle: the test reads the mail where the invitation put it.
        server.serviceClock = ManualClock()
        return server
    }

    static func options(_ client: some TestClientProtocol, _ username: String, invitation: String? = nil)
        async throws -> TestResponse
    {
        var body = ["username": username]
        if let invitation { body["invitation"] = invitation }
        return try await client.json("/api/registration/options", .post, body: jsonString(body))
    }

    /// The whole passkey sign-up; the finish step's answer.
    static func signUp(_ client: some TestClientProtocol, _ username: String, invitation: String? = nil) async throws
        -> TestResponse
    {
        let options = try await Self.options(client, username, invitation: invitation)
        guard options.status == .ok else { return options }
        return try await finish(client, options)
    }

    static func finish(_ client: some TestClientProtocol, _ options: TestResponse) async throws -> TestResponse {
        let va = VirtualAuthenticator(configuration: .init(transports: ["internal"]))
        let created = try va.create(optionsJSON: Array(options.body.readableBytesView), origin: "http://localhost:8080")
        return try await client.json(
            "/api/registration", .post,
            body: #"{"credential":"# + String(decoding: created.json, as: UTF8.self) + "}",
            headers: [ceremony: options.headers[ceremony] ?? ""])
    }

    static func token(_ link: String) -> String {
        String(link[link.range(of: "#invitation=")!.upperBound...])
    }

    static func admin(_ store: SQLStore, _ server: TestServer, _ groups: MemoryAccountGroups) -> InvitationAdmin {
        InvitationAdmin(store: store, groups: groups, configuration: server.configuration)
    }

    @Test(arguments: TestDatabase.all)
    func closedAndInviteOnlyRefuseSignUpButNotTheOperator(_ db: TestDatabase) async throws {
        let groups = MemoryAccountGroups(groups: [])
        for policy in [SignUpPolicy.closed, .inviteOnly, .open] {
            let server = Self.server(db, signUp: policy, groups: groups)
            try await server.app().test(.router) { client in
                let shown = try await client.json("/api/registration/policy")
                #expect(shown.object["signUp"] as? String == policy.rawValue)
                let refused = try await Self.options(client, "ada")
                switch policy {
                case .closed:
                    #expect(refused.status == .forbidden && refused.errorCode == "sign_up_closed")
                    // An invitation does not open a closed sign-up.
                    let invited = try await Self.options(
                        client, "ada", invitation: "0123456789abcdef." + String(repeating: "A", count: 43))
                    #expect(invited.errorCode == "sign_up_closed")
                case .inviteOnly:
                    #expect(refused.status == .forbidden && refused.errorCode == "invitation_required")
                case .open:
                    #expect(refused.status == .ok)
                }
            }
            // The operator's command still makes accounts.
            let created = try await server.withStore { store in
                try await Admin(store: store, issuer: server.configuration.origin).createUser(
                    "op-\(policy.rawValue)", displayName: nil, password: "correct horse battery", scryptLogN: 10)
            }
            #expect(created.contains("op-\(policy.rawValue)"))
        }
    }

    @Test(arguments: TestDatabase.all)
    func anInvitationSignsUpOnceAndJoinsItsGroups(_ db: TestDatabase) async throws {
        let groups = MemoryAccountGroups(groups: ["family", "admins"])
        let server = Self.server(db, signUp: .inviteOnly, groups: groups)
        let now = server.clock.now
        let (made, unknownRefused, badAddressRefused) = try await server.withStore { store in
            let admin = Self.admin(store, server, groups)
            let made = try await admin.create(
                email: "zoe@example.org", groups: ["family", "family"], lifetime: 7 * 86400, at: now)
            var unknown = false
            do { _ = try await admin.create(email: nil, groups: ["Family"], lifetime: 3600, at: now) } catch {
                unknown = "\(error)".contains("no such group: Family")
            }
            var badAddress = false
            do { _ = try await admin.create(email: "not an address", groups: [], lifetime: 3600, at: now) } catch {
                badAddress = true
            }
            return (made, unknown, badAddress)
        }
        #expect(unknownRefused && badAddressRefused)
        #expect(made.mailed && made.link.hasPrefix("http://localhost:8080/signup#invitation=\(made.id)."))
        // The mail is in the outbox with the invitation (its content sealed), and the audit says so.
        let (mails, kinds) = try await server.withStore { store in
            let mails = try await store.db.raw("SELECT kind FROM mail_outbox").all().map {
                try $0.decode(column: "kind", as: String.self)
            }
            let kinds = try await store.db.raw("SELECT kind FROM audit_events ORDER BY at").all().map {
                try $0.decode(column: "kind", as: String.self)
            }
            return (mails, kinds)
        }
        #expect(mails == ["invitation"])
        #expect(kinds.sorted() == ["invitation.created", "invitation.mailed"])

        let token = Self.token(made.link)
        try await server.app().test(.router) { client in
            let created = try await Self.signUp(client, "zoe", invitation: token)
            #expect(created.status == .created, "\(created.text)")
            let id = try #require(try await server.withStore { try await $0.user(usernameKey: "zoe")?.id })
            #expect(try await groups.groupSlugs(userID: id) == ["family"])
            // Used: one answer, for the options step and for anyone else.
            let again = try await Self.options(client, "zoe2", invitation: token)
            #expect(again.status == .forbidden && again.errorCode == "invitation_invalid")
            let record = try await server.withStore { try await $0.invitation(id: made.id) }
            #expect(record?.usedBy == id && record?.state(at: server.clock.now) == "used")
            let used = try await server.withStore { store in
                try await store.db.raw(
                    "SELECT detail FROM audit_events WHERE kind = 'invitation.used' AND outcome = 'success'"
                )
                .all().map { try $0.decode(column: "detail", as: String.self) }
            }
            #expect(used == ["\(made.id) groups=family"])
        }
    }

    @Test(arguments: TestDatabase.all)
    func usedRevokedExpiredAndWrongInvitationsGetOneAnswer(_ db: TestDatabase) async throws {
        let groups = MemoryAccountGroups(groups: ["family"])
        let server = Self.server(db, signUp: .inviteOnly, groups: groups)
        let now = server.clock.now
        let (revoked, expiring, racing, doomed) = try await server.withStore { store in
            let admin = Self.admin(store, server, groups)
            let revoked = try await admin.create(email: nil, groups: [], lifetime: 3600, at: now)
            try await admin.revoke(id: revoked.id, at: now)
            let expiring = try await admin.create(email: nil, groups: [], lifetime: 300, at: now)
            let racing = try await admin.create(email: nil, groups: ["family"], lifetime: 3600, at: now)
            let doomed = try await admin.create(email: nil, groups: ["family"], lifetime: 3600, at: now)
            return (revoked, expiring, racing, doomed)
        }
        try await server.app().test(.router) { client in
            let wrongSecret = revoked.id + "." + String(repeating: "A", count: 43)
            for token in [
                Self.token(revoked.link), "garbage", "", String(Self.token(racing.link).dropLast()),
                Self.token(racing.link).uppercased(), "ffffffffffffffff." + String(repeating: "A", count: 43),
                wrongSecret,
            ] {
                let refused = try await Self.options(client, "zoe", invitation: token)
                #expect(refused.status == .forbidden, "\(token)")
                #expect(refused.errorCode == "invitation_invalid", "\(token)")
            }
            // Revoked or used cannot be revoked again.
            await #expect(throws: AdminError.self) {
                try await server.withStore { try await Self.admin($0, server, groups).revoke(id: revoked.id, at: now) }
            }

            // Checked at the options step, revoked before the finish: nothing is created, the username stays free.
            let options = try await Self.options(client, "racer", invitation: Self.token(racing.link))
            #expect(options.status == .ok)
            try await server.withStore { try await Self.admin($0, server, groups).revoke(id: racing.id, at: now) }
            let finished = try await Self.finish(client, options)
            #expect(finished.status == .forbidden && finished.errorCode == "invitation_invalid")
            #expect(try await server.withStore { try await $0.user(usernameKey: "racer") } == nil)

            // A group removed after the invitation was made: refused, nothing created, the invitation unspent.
            let removedOptions = try await Self.options(client, "lonely", invitation: Self.token(doomed.link))
            #expect(removedOptions.status == .ok)
            groups.removeGroup("family")
            let removed = try await Self.finish(client, removedOptions)
            #expect(removed.status == .forbidden && removed.errorCode == "invitation_invalid")
            #expect(try await server.withStore { try await $0.user(usernameKey: "lonely") } == nil)
            let unspent = try await server.withStore { try await $0.invitation(id: doomed.id) }
            #expect(unspent?.state(at: server.clock.now) == "usable")

            // Past its expiry.
            server.clock.advance(301)
            let expired = try await Self.options(client, "late", invitation: Self.token(expiring.link))
            #expect(expired.errorCode == "invitation_invalid")
        }
    }

    @Test(arguments: TestDatabase.all)
    func guessingAnInvitationIsRateLimited(_ db: TestDatabase) async throws {
        let groups = MemoryAccountGroups(groups: [])
        let server = Self.server(db, signUp: .inviteOnly, groups: groups)
        let made = try await server.withStore {
            try await Self.admin($0, server, groups).create(
                email: nil, groups: [], lifetime: 3600, at: server.clock.now)
        }
        try await server.app().test(.router) { client in
            // Well formed (43 base64url characters, 32 bytes), not the secret.
            let wrong = made.id + "." + String(repeating: "A", count: 43)
            for _ in 0..<RateLimitPolicy().perAccount {
                #expect(try await Self.options(client, "zoe", invitation: wrong).errorCode == "invitation_invalid")
            }
            // The invitation's budget is spent: even its right token waits.
            let limited = try await Self.options(client, "zoe", invitation: Self.token(made.link))
            #expect(limited.status == .tooManyRequests)
        }
    }

    @Test(arguments: [("7d", 604_800.0), ("12h", 43_200), ("30m", 1_800), ("300", 300)])
    func lifetimesAreRead(_ text: String, _ seconds: TimeInterval) {
        #expect(InvitationAdmin.lifetime(text) == seconds)
    }

    @Test(arguments: ["", "d", "0d", "91d", "4m", "-1d", "1w", "1.5d", "99999999d"])
    func badLifetimesAreRefused(_ text: String) {
        #expect(InvitationAdmin.lifetime(text) == nil)
    }
}
