import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameGroups
@testable import SesameIdentityProvider
@testable import SesameOperations
@testable import SesameServer

/// Groups and memberships on both engines: the slug rule (no folding), the operator's commands and their audit
/// events, custom claims refused when they name a claim Sesame gives, and the core's `AccountGroups`.
@Suite struct GroupsTests {
    /// Slugs refused, each for a reason an operator could type by mistake or an attacker on purpose.
    static let refusedSlugs = [
        "", "Family", "FAMILY", "f\u{0430}mily",  // Cyrillic а, looks like a Latin a
        "family ", " family", "fam ily", "1family", "-family", "fam_ily", "fam.ily", "famille\u{0301}",
        "\u{FF46}amily",  // fullwidth f
        String(repeating: "a", count: 65),
    ]

    @Test func theSlugRuleRefusesWhatItWouldOtherwiseFold() {
        for slug in Self.refusedSlugs {
            #expect(!GroupSlugs.isValid(slug), "\(slug)")
            #expect(GroupSlugs.problem(slug) != nil, "\(slug)")
        }
        for slug in ["family", "a", "admins-2", "x-y-z", String(repeating: "a", count: 64)] {
            #expect(GroupSlugs.isValid(slug) && GroupSlugs.problem(slug) == nil, "\(slug)")
        }
        #expect(GroupSlugs.problem("Family")?.contains("capital") == true)
        #expect(GroupSlugs.problem("f\u{0430}mily")?.contains("outside ASCII") == true)
        #expect(GroupSlugs.list("family,admins").problem == nil)
        #expect(GroupSlugs.list("family,,admins").problem != nil)
        #expect(GroupSlugs.list("family,Admins").problem != nil)
    }

    @Test(arguments: TestDatabase.all)
    func operatorsManageGroupsAndEveryChangeIsAudited(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada")
        try await server.seedUser("bob")
        try await server.withStore { store in
            let admin = GroupsAdmin(store: store, adminGroup: "admins")
            #expect(
                try await admin.add("family", name: "The family", claims: #"{"roles": ["viewer"]}"#).contains("added"))
            try await admin.add("admins", name: nil, claims: nil)
            // Refusals: each a clear message, nothing written.
            for slug in Self.refusedSlugs {
                await #expect(throws: AdminError.self) { try await admin.add(slug, name: nil, claims: nil) }
            }
            let duplicate = await #expect(throws: AdminError.self) {
                try await admin.add("family", name: nil, claims: nil)
            }
            #expect(duplicate?.message.contains("exists") == true)
            #expect(try await admin.list() == ["admins  admins  members=0", "family  The family  members=0"])

            #expect(try await admin.addMember("ADA", to: "family") == "ada added to family")
            try await admin.addMember("bob", to: "family")
            try await admin.addMember(ada.id, to: "admins")
            let again = await #expect(throws: AdminError.self) { try await admin.addMember("ada", to: "family") }
            #expect(again?.message.contains("already") == true)
            let noUser = await #expect(throws: AdminError.self) { try await admin.addMember("carol", to: "family") }
            #expect(noUser?.message.contains("no account") == true)
            let noGroup = await #expect(throws: AdminError.self) { try await admin.addMember("ada", to: "friends") }
            #expect(noGroup?.message.contains("no group") == true)
            // A look-alike or case-changed slug never reaches a group.
            await #expect(throws: AdminError.self) { try await admin.addMember("ada", to: "Family") }
            await #expect(throws: AdminError.self) { try await admin.addMember("ada", to: "f\u{0430}mily") }

            let shown = try await admin.show("family")
            #expect(shown.contains("name:    The family") && shown.contains(#"{"roles":["viewer"]}"#))
            #expect(shown.contains("  ada  ") && shown.contains("  bob  "))
            #expect(try await admin.update("family", name: "Family", claims: nil).contains("now Family"))
            await #expect(throws: AdminError.self) { try await admin.update("family", name: " ", claims: nil) }

            let groups = StoredAccountGroups(store: store)
            #expect(try await groups.groupSlugs(userID: ada.id) == ["admins", "family"])
            #expect(try await groups.unknownSlugs(["family", "friends", "admins", "x"]) == ["friends", "x"])
            #expect(try await groups.groupClaims(userID: ada.id).claims == ["roles": .array([.string("viewer")])])
            // The operator's view of the account and its export name the groups too.
            let operator_ = Admin(store: store, groups: groups)
            #expect(try await operator_.showUser("ada").contains("groups:       admins, family"))
            let export = try await operator_.exportUser("ada", providerListFile: nil)
            let document = try JSONSerialization.jsonObject(with: Data(export.utf8)) as? [String: Any]
            #expect(document?["groups"] as? [String] == ["admins", "family"])

            #expect(try await admin.removeMember("ada", from: "family").contains("removed"))
            await #expect(throws: AdminError.self) { try await admin.removeMember("ada", from: "family") }
            #expect(try await groups.groupSlugs(userID: ada.id) == ["admins"])
            #expect(try await admin.remove("admins").contains("removed"))
            await #expect(throws: AdminError.self) { try await admin.remove("admins") }
            #expect(try await groups.groupSlugs(userID: ada.id) == [])

            let kinds = try await store.auditEvents(userID: nil, limit: 50).filter { $0.kind.hasPrefix("group.") }
            #expect(kinds.allSatisfy { $0.clientAddress == "cli" && $0.outcome == "success" })
            #expect(
                kinds.map { "\($0.kind) \($0.detail) \($0.username ?? "-")" }.sorted() == [
                    "group.added admins -", "group.added family -", "group.changed family -",
                    "group.member_added admins ada", "group.member_added family ada", "group.member_added family bob",
                    "group.member_removed family ada", "group.removed admins -",
                ])
        }
    }

    @Test(arguments: TestDatabase.all)
    func customClaimsCannotNameWhatSesameGives(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.withStore { store in
            let service = GroupsService(store: store, adminGroup: "admins")
            for claims in [
                #"{"sub": "someone-else"}"#, #"{"email": "boss@example.org"}"#, #"{"groups": ["admins"]}"#,
                #"{"iss": "x"}"#, #"{"exp": 99999999999}"#, #"{"nonce": "n"}"#, #"{"email_verified": true}"#,
                #"{"preferred_username": "root"}"#, #"{"updated_at": 1}"#, #"{"aud": "x"}"#, #"["roles"]"#, "1",
                "{", #"{"": 1}"#, "{\"roles\": \"" + String(repeating: "x", count: 5000) + "\"}",
            ] {
                let error = await #expect(throws: APIError.self) {
                    try await service.add(slug: "g", name: nil, claims: claims, by: .commandLine)
                }
                #expect(error?.code == .invalidGroupClaims, "\(claims.prefix(40))")
            }
            #expect(try await store.groups().isEmpty)
            let group = try await service.add(
                slug: "editors", name: nil, claims: #"{"roles": ["editor"], "team": "web"}"#, by: .commandLine)
            let refused = await #expect(throws: APIError.self) {
                try await service.update(slug: "editors", name: nil, claims: #"{"sub": "x"}"#, by: .commandLine)
            }
            #expect(refused?.code == .invalidGroupClaims)
            #expect(try await store.group(slug: "editors")?.claims == group.claims)
        }
    }

    @Test func claimsMergeByGroupSlugAscendingLaterWins() {
        func group(_ slug: String, _ claims: JSONValue) -> GroupRecord {
            GroupRecord(id: slug, slug: slug, name: slug, claims: claims, createdAt: Date(), updatedAt: Date())
        }
        let merged = GroupClaims.merged([
            group("zeta", .object(["roles": .array([.string("z")]), "team": .string("zeta")])),
            group("alpha", .object(["roles": .array([.string("a")]), "tier": .int(1)])),
        ])
        #expect(merged == ["roles": .array([.string("z")]), "team": .string("zeta"), "tier": .int(1)])
    }

    @Test(arguments: TestDatabase.all)
    func joiningIsAllOrNothingAndDeletionRemovesMemberships(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let ada = try await server.seedUser("ada")
        try await server.withStore { store in
            let admin = GroupsAdmin(store: store, adminGroup: "admins")
            try await admin.add("family", name: nil, claims: nil)
            try await admin.add("friends", name: nil, claims: nil)
            let groups = StoredAccountGroups(store: store)
            await #expect(throws: APIError.self) {
                try await store.engine.withTransaction { db in
                    try await groups.join(userID: ada.id, groups: ["family", "nobody"], at: Date(), in: db)
                }
            }
            #expect(try await groups.groupSlugs(userID: ada.id) == [])
            try await store.engine.withTransaction { db in
                try await groups.join(userID: ada.id, groups: ["friends", "family", "family"], at: Date(), in: db)
            }
            #expect(try await groups.groupSlugs(userID: ada.id) == ["family", "friends"])
            // Held already: kept, no error.
            try await store.engine.withTransaction { db in
                try await groups.join(userID: ada.id, groups: ["family"], at: Date(), in: db)
            }
            _ = try await store.deleteUser(id: ada.id)
            #expect(try await store.groupMembers(slug: "family") == [])
            let rows = try await store.db.raw("SELECT COUNT(*) AS n FROM group_members").first()
            #expect(try rows?.decode(column: "n", as: Int.self) == 0)
        }
    }

    @Test(arguments: TestDatabase.all)
    func theAdminAPIIsForMembersOfTheAdminGroup(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let bob = try await server.seedUser("bob", password: "correct horse battery")
        try await server.app().test(.router) { client in
            // The admin API needs a passkey sign-in (`AdminGate`); ada signs up with one.
            let (session, _) = try await signUpWithPasskey(client, "ada")
            try await server.withStore { store in
                let admin = GroupsAdmin(store: store, adminGroup: "admins")
                try await admin.add("admins", name: nil, claims: nil)
                try await admin.addMember("ada", to: "admins")
            }
            let bobSession = try await signInWithPassword(client, "bob", "correct horse battery")
            let refused = try await client.json("/api/admin/groups", headers: bobSession.bearerHeaders)
            #expect(refused.status == .forbidden && refused.errorCode == "not_an_admin")
            let refusedWrite = try await client.json(
                "/api/admin/groups", .post, body: #"{"slug": "family"}"#, headers: bobSession.bearerHeaders)
            #expect(refusedWrite.status == .forbidden && refusedWrite.errorCode == "not_an_admin")
            #expect(try await client.json("/api/admin/groups").status == .unauthorized)

            // A cookie without its CSRF header writes nothing.
            let forged = try await client.json(
                "/api/admin/groups", .post, body: #"{"slug": "family"}"#, headers: [.cookie: session.cookie])
            #expect(forged.status == .forbidden && forged.errorCode == "csrf_check_failed")
            // With the session's CSRF header but not the console's own, still nothing.
            let halfForged = try await client.json(
                "/api/admin/groups", .post, body: #"{"slug": "family"}"#, headers: session.cookieHeaders)
            #expect(halfForged.status == .forbidden && halfForged.errorCode == "csrf_check_failed")
            let created = try await client.json(
                "/api/admin/groups", .post,
                body: #"{"slug": "family", "name": "Family", "claims": {"roles": ["viewer"]}}"#,
                headers: session.bearerHeaders)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.object["slug"] as? String == "family")
            #expect((created.object["claims"] as? [String: Any])?["roles"] as? [String] == ["viewer"])
            for (body, code) in [
                (#"{"slug": "Family"}"#, "invalid_group_slug"), (#"{"slug": "f\u0430mily"}"#, "invalid_group_slug"),
                (#"{"slug": "family"}"#, "group_exists"),
                (#"{"slug": "x", "claims": {"sub": "y"}}"#, "invalid_group_claims"),
                (#"{"slug": "x", "claims": [1]}"#, "invalid_group_claims"),
            ] {
                let answer = try await client.json(
                    "/api/admin/groups", .post, body: body, headers: session.bearerHeaders)
                #expect(answer.errorCode == code, "\(body): \(answer.text)")
            }
            let added = try await client.json(
                "/api/admin/groups/family/members/BOB", .put, headers: session.bearerHeaders)
            #expect(added.status == .created && added.object["username"] as? String == "bob")
            #expect(
                try await client.json("/api/admin/groups/family/members/bob", .put, headers: session.bearerHeaders)
                    .errorCode == "membership_unchanged")
            #expect(
                try await client.json("/api/admin/groups/family/members/carol", .put, headers: session.bearerHeaders)
                    .errorCode == "account_not_found")
            let shown = try await client.json("/api/admin/groups/family", headers: session.bearerHeaders).object
            #expect((shown["members"] as? [[String: Any]])?.map { $0["userId"] as? String } == [bob.id])
            let renamed = try await client.json(
                "/api/admin/groups/family", .patch, body: #"{"name": "The family"}"#, headers: session.bearerHeaders)
            #expect(renamed.object["name"] as? String == "The family" && renamed.object["memberCount"] as? Int == 1)
            let listed = try await client.json("/api/admin/groups", headers: session.bearerHeaders).object
            #expect((listed["groups"] as? [[String: Any]])?.map { $0["slug"] as? String } == ["admins", "family"])

            // The account document shows the person's groups.
            let account = try await client.json("/api/account", headers: bobSession.bearerHeaders).object
            #expect(account["groups"] as? [String] == ["family"])

            #expect(
                try await client.json(
                    "/api/admin/groups/family/members/bob", .delete, headers: session.bearerHeaders
                ).status == .noContent)
            #expect(
                try await client.json("/api/admin/groups/family", .delete, headers: session.bearerHeaders).status
                    == .noContent)
            #expect(
                try await client.json("/api/admin/groups/family", headers: session.bearerHeaders).errorCode
                    == "group_not_found")

            let events = try await server.withStore { try await $0.auditEvents(userID: nil, limit: 20) }
                .filter { $0.kind.hasPrefix("group.") && $0.clientAddress != "cli" }
            #expect(events.count == 5)
            #expect(events.allSatisfy { $0.detail.hasSuffix("by admin ada") && $0.clientAddress == "192.0.2.1" })
            #expect(events.first { $0.kind == "group.member_added" }?.userID == bob.id)

            // The last administrator with a passkey cannot be taken out (bob has a password only).
            try await server.withStore { store in
                let admin = GroupsAdmin(store: store, adminGroup: "admins")
                try await admin.addMember("bob", to: "admins")
                await #expect(throws: AdminError.self) { try await admin.removeMember("ada", from: "admins") }
            }
            let lastOne = try await client.json(
                "/api/admin/groups/admins/members/ada", .delete, headers: session.bearerHeaders)
            #expect(lastOne.status == .conflict && lastOne.errorCode == "last_administrator", "\(lastOne.text)")
            // Taken out of the admin group once another administrator has a passkey, the admin is refused at once.
            _ = try await signUpWithPasskey(client, "carol")
            try await server.withStore { store in
                let admin = GroupsAdmin(store: store, adminGroup: "admins")
                try await admin.addMember("carol", to: "admins")
                _ = try await admin.removeMember("ada", from: "admins")
            }
            #expect(
                try await client.json("/api/admin/groups", headers: session.bearerHeaders).errorCode == "not_an_admin")
        }
    }
}
