import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesamePasskeys

@Suite struct PasskeyManagementTests {
    func credential(_ id: UInt8, user: User, aaguid: [UInt8]?) -> StoredCredential {
        StoredCredential(
            id: [id, id, id], userID: user.id, publicKey: [0xA5], signCount: 0, transports: ["hybrid", "internal"],
            aaguid: aaguid,
            backupEligible: true, backedUp: id == 1, userVerified: true, attestationFormat: "none",
            name: "Passkey \(id)",
            createdAt: Date(timeIntervalSince1970: 1_800_000_000), lastUsedAt: nil
        )
    }

    @Test(arguments: TestDatabase.all)
    func listRenameDeleteAndSignals(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        let user = try await server.seedUser("xena", password: "correct horse")
        let iCloud: [UInt8] = [
            0xfb, 0xfc, 0x30, 0x07, 0x15, 0x4e, 0x4e, 0xcc, 0x8c, 0x0b, 0x6e, 0x02, 0x05, 0x57, 0xd7, 0xbd,
        ]
        let other = try await server.seedUser("yuri", password: "correct horse")
        try await server.withStore { store in
            try await store.addCredential(credential(9, user: other, aaguid: nil))
            try await store.addCredential(credential(1, user: user, aaguid: iCloud))
            try await store.addCredential(credential(2, user: user, aaguid: Array(repeating: 0, count: 16)))
        }
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "xena", "correct horse")
            let list = try await client.json("/api/account/passkeys", headers: session.bearerHeaders)
            let items = try JSONSerialization.jsonObject(with: Data(list.text.utf8)) as? [[String: Any]] ?? []
            #expect(items.count == 2)
            // The bundled list (Resources/providers.json) names this AAGUID "Apple Passwords"; it ships no icons.
            #expect(items[0]["provider"] as? String == "Apple Passwords")
            #expect(items[0]["providerIcon"] == nil)
            #expect(items[1]["providerIcon"] == nil)
            #expect(items[0]["aaguid"] as? String == "fbfc3007-154e-4ecc-8c0b-6e020557d7bd")
            #expect(items[0]["backedUp"] as? Bool == true)
            #expect(items[1]["provider"] == nil)
            #expect(items[1]["backedUp"] as? Bool == false)
            #expect(items[0]["transports"] as? [String] == ["hybrid", "internal"])
            let firstID = Base64URL.encode([1, 1, 1])

            let rename = try await client.json(
                "/api/account/passkeys/\(firstID)", .patch, body: #"{"name":"My phone"}"#,
                headers: session.bearerHeaders)
            #expect(rename.status == .ok)
            let empty = try await client.json(
                "/api/account/passkeys/\(firstID)", .patch, body: #"{"name":"  "}"#, headers: session.bearerHeaders)
            #expect(empty.status == .badRequest)
            let badID = try await client.json(
                "/api/account/passkeys/not+base64", .delete, headers: session.bearerHeaders)
            #expect(badID.status == .badRequest)
            #expect(badID.errorCode == "invalid_credential_id")

            let signals = try await client.json("/api/account/signals", headers: session.bearerHeaders)
            let all = signals.object["allAcceptedCredentials"] as? [String: Any]
            #expect(all?["rpId"] as? String == "localhost")
            #expect(all?["userId"] as? String == Base64URL.encode(user.userHandle))
            #expect(all?["allAcceptedCredentialIds"] as? [String] == [firstID, Base64URL.encode([2, 2, 2])])
            let details = signals.object["currentUserDetails"] as? [String: Any]
            #expect(details?["name"] as? String == "xena")

            // Another account's passkey is not found from this one.
            let foreign = Base64URL.encode([9, 9, 9])
            #expect(
                try await client.json("/api/account/passkeys/\(foreign)", .delete, headers: session.bearerHeaders)
                    .status == .notFound)
            #expect(
                try await client.json(
                    "/api/account/passkeys/\(foreign)", .patch, body: #"{"name":"x"}"#, headers: session.bearerHeaders
                ).status == .notFound)

            // With a password, both passkeys can go; without, the last one cannot.
            #expect(
                try await client.json("/api/account/passkeys/\(firstID)", .delete, headers: session.bearerHeaders)
                    .status == .ok)
            #expect(
                try await client.json("/api/account/password", .delete, headers: session.bearerHeaders).status == .ok)
            let last = try await client.json(
                "/api/account/passkeys/\(Base64URL.encode([2, 2, 2]))", .delete, headers: session.bearerHeaders)
            #expect(last.status == .conflict)
            #expect(last.errorCode == "last_way_in")
        }
    }

    /// `POST /api/account/passkeys/options` with no body, `{}`, `{"kind":"passkey"}` and `{"kind":"security-key"}`.
    @Test(arguments: [
        (nil as String?, "required", nil as String?, [] as [String]),
        ("{}", "required", nil, []),
        (#"{"kind":"passkey"}"#, "required", nil, []),
        (#"{"kind":"security-key"}"#, "discouraged", "cross-platform", ["security-key"]),
    ])
    func addPasskeyOptionsByKind(_ body: String?, residentKey: String, attachment: String?, hints: [String])
        async throws
    {
        let server = TestServer(.sqlite)
        _ = try await server.seedUser("zoe", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "zoe", "correct horse")
            for headers in [session.bearerHeaders, session.cookieHeaders] {
                let answer = try await client.json("/api/account/passkeys/options", .post, body: body, headers: headers)
                #expect(answer.status == .ok, "\(answer.text)")
                let selection = answer.object["authenticatorSelection"] as? [String: Any]
                #expect(selection?["residentKey"] as? String == residentKey)
                #expect(selection?["requireResidentKey"] as? Bool == (residentKey == "required"))
                #expect(selection?["authenticatorAttachment"] as? String == attachment)
                #expect((answer.object["hints"] as? [String] ?? []) == hints)
                #expect((answer.object["user"] as? [String: Any])?["name"] as? String == "zoe")
            }
        }
    }

    @Test(arguments: [
        (#"{"kind":"platform"}"#, HTTPResponse.Status.badRequest, "invalid_kind"),
        (#"{"kind":""}"#, .badRequest, "invalid_kind"),
        (#"{"kind":"Security-Key"}"#, .badRequest, "invalid_kind"),
        (#"{"kind":7}"#, .badRequest, "malformed_json"),
        (#"["security-key"]"#, .badRequest, "malformed_json"),
        (#"{"kind":"#, .badRequest, "malformed_json"),
    ])
    func addPasskeyOptionsRejectsBadKinds(_ body: String, status: HTTPResponse.Status, code: String) async throws {
        let server = TestServer(.sqlite)
        _ = try await server.seedUser("zoe", password: "correct horse")
        try await server.app().test(.router) { client in
            let session = try await signInWithPassword(client, "zoe", "correct horse")
            let answer = try await client.json(
                "/api/account/passkeys/options", .post, body: body, headers: session.bearerHeaders)
            #expect(answer.status == status)
            #expect(answer.errorCode == code)
            // A text body is refused for its type, not read as "no body".
            var text = session.bearerHeaders
            text[.contentType] = "text/plain"
            let wrongType = try await client.json(
                "/api/account/passkeys/options", .post, body: #"{"kind":"security-key"}"#, headers: text)
            #expect(wrongType.status == .unsupportedMediaType)
        }
    }
}
