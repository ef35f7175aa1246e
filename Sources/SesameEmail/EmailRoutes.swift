import Foundation
import Hummingbird
import SesameCore

/// The account's email address over the JSON API.
///
/// `GET /api/account/email` shows it (signed in). `PUT /api/account/email {address}` adds or changes it and mails a
/// code and a link to the new address (a recent sign-in; the verified address stays until the new one is verified).
/// `POST /api/account/email/confirm {code}` verifies with the code (signed in). `POST /api/email/verify {token}`
/// verifies with the link's token (no session: the mail may be opened on another device; pages post it from
/// `/account/email/verify`, so the Origin check of every write applies). `DELETE /api/account/email` removes it
/// (a recent sign-in).
package struct EmailRoutes {
    package let sesame: ServerCore
    package let verifier: EmailVerifier

    package init(sesame: ServerCore, store: any EmailStore) {
        self.sesame = sesame
        self.verifier = EmailVerifier(sesame: sesame, store: store)
    }

    package struct AddressRequest: Decodable, Sendable { package let address: String }
    package struct CodeRequest: Decodable, Sendable { package let code: String }
    package struct TokenRequest: Decodable, Sendable { package let token: String }

    /// The account's address: `address` is the verified one (null until one is), `pending` a new one waiting for
    /// its code (null when none, or when its code has expired).
    package struct EmailBody: ResponseEncodable, Sendable {
        package let setting: String
        package let address: String?
        package let verified: Bool
        package let verifiedAt: Date?
        package let pending: String?
        package let pendingExpiresAt: Date?

        private enum CodingKeys: String, CodingKey {
            case setting, address, verified, verifiedAt, pending, pendingExpiresAt
        }

        /// Every field is present, null when there is nothing (the document's schema requires them all).
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(setting, forKey: .setting)
            try container.encode(address, forKey: .address)
            try container.encode(verified, forKey: .verified)
            try container.encode(verifiedAt, forKey: .verifiedAt)
            try container.encode(pending, forKey: .pending)
            try container.encode(pendingExpiresAt, forKey: .pendingExpiresAt)
        }
    }

    package struct VerifiedBody: ResponseEncodable, Sendable {
        package let status: String
        package let address: String
    }

    package struct PendingBody: ResponseEncodable, Sendable {
        package let status: String
        package let pending: String
        package let pendingExpiresAt: Date
    }

    package func register(on router: Router<SesameRequestContext>) {
        let account = router.group("/api/account", context: SignedInRequestContext.self)
        let sensitive = router.group("/api/account", context: RecentlySignedInRequestContext.self)

        account.get("/email") { _, context in
            try verifier.requireEnabled()
            let record = try await verifier.store.email(userID: context.user.id)
            let now = sesame.now
            let pending = record?.pending(at: now)
            return EmailBody(
                setting: verifier.policy.rawValue, address: record?.address, verified: record?.address != nil,
                verifiedAt: record?.verifiedAt, pending: pending,
                pendingExpiresAt: pending == nil ? nil : record?.pendingExpiresAt)
        }

        sensitive.put("/email") { request, context in
            let body = try await request.decode(as: AddressRequest.self, context: context)
            let started = try await verifier.begin(
                body.address, user: context.user, request: request, context: context)
            return EditedResponse(
                status: .accepted,
                response: PendingBody(
                    status: "code_sent", pending: started.address, pendingExpiresAt: started.expiresAt))
        }

        account.post("/email/confirm") { request, context in
            let body = try await request.decode(as: CodeRequest.self, context: context)
            let verified = try await verifier.confirm(
                code: body.code, user: context.user, request: request, context: context)
            return VerifiedBody(status: "verified", address: verified.address)
        }

        sensitive.delete("/email") { _, context in
            try await verifier.remove(user: context.user, context: context)
            return Status(status: "removed")
        }

        router.post("/api/email/verify") { request, context in
            let body = try await request.decode(as: TokenRequest.self, context: context)
            let verified = try await verifier.confirm(token: body.token, request: request, context: context)
            return VerifiedBody(status: "verified", address: verified.address)
        }
    }
}
