import Foundation
import Hummingbird
import WebAuthn
import SQLKit
import SesameCore
import SQLKit

/// Passkey sign-up: `POST /api/registration/options {username, displayName?}` → creation options (a new random
/// user handle, resident key required) bound to the ceremony token; `POST /api/registration {credential}` verifies
/// the new passkey and creates the account, its passkey, the audit event and a session in one transaction.
///
/// Who may sign up is the `signUp` setting (`GET /api/registration/policy` tells the page): `closed` refuses both
/// steps (`sign_up_closed`); `invite-only` needs `invitation` (the token from an invitation's link) at the options
/// step (`invitation_required`). An invitation, under either `open` or `invite-only`, is checked at the options step
/// and spent, with its groups joined, in the account's transaction (`SignUpInvitations`).
package struct SignUpRoutes {
    package let sesame: ServerCore
    package let store: any PasskeyStorage
    package let passkeyVerifier: PasskeyVerifier
    package let invitations: any SignUpInvitations
    /// The first account on an empty server becomes an administrator (`firstSignUpAdmin`); nil when off.
    package let firstAdmin: (any SignUpFirstAdmin)?

    package init(
        sesame: ServerCore, store: any PasskeyStorage, passkeyVerifier: PasskeyVerifier,
        invitations: any SignUpInvitations = NoSignUpInvitations(), firstAdmin: (any SignUpFirstAdmin)? = nil
    ) {
        self.sesame = sesame
        self.store = store
        self.passkeyVerifier = passkeyVerifier
        self.invitations = invitations
        self.firstAdmin = firstAdmin
    }

    package struct OptionsRequest: Decodable, Sendable {
        package let username: String
        package let displayName: String?
        /// The invitation's token, from its link.
        package let invitation: String?
        /// The account's email address, where the `email` setting asks for one (`SignUpAddresses`).
        package let email: String?
    }

    package struct PolicyResponse: ResponseEncodable, Sendable {
        package let signUp: String
    }

    /// Kept with a sign-up challenge: the account to create when the response verifies.
    package struct PendingAccount: Codable, Sendable {
        package let username: String
        package let displayName: String
        package let userHandle: String
        /// The invitation checked at the options step, spent with the account.
        package let invitation: String?
        /// The address to verify, checked at the options step; nil when none was given (and for challenges stored
        /// before sign-up asked for one).
        package var email: String? = nil
    }

    package struct FinishRequest: Decodable, Sendable {
        package let credential: RegistrationResponseJSON
        /// Optional name for the passkey.
        package let name: String?
    }

    /// The invitation's writes in the account's transaction, if the sign-up has one.
    /// The writes `steps` make, in order, in one transaction's database; nil when there are none.
    static func together(_ steps: [(@Sendable (any SQLDatabase) async throws -> Void)?])
        -> (@Sendable (any SQLDatabase) async throws -> Void)?
    {
        let present = steps.compactMap { $0 }
        guard !present.isEmpty else { return nil }
        return { db in
            for step in present { try await step(db) }
        }
    }

    func spending(_ invitation: String?, user: User, clientAddress: String)
        -> (@Sendable (any SQLDatabase) async throws -> Void)?
    {
        guard let invitation else { return nil }
        let invitations = self.invitations
        let (userID, username, at) = (user.id, user.username, user.createdAt)
        return { db in
            try await invitations.redeem(
                id: invitation, userID: userID, username: username, clientAddress: clientAddress, at: at, in: db)
        }
    }

    package func register(on router: Router<SesameRequestContext>) {
        router.get("/api/registration/policy") { _, _ in
            PolicyResponse(signUp: sesame.configuration.signUp.rawValue)
        }

        router.post("/api/registration/options") { request, context in
            let body = try await request.decode(as: OptionsRequest.self, context: context)
            if sesame.configuration.signUp == .closed { throw APIError.signUpClosed }
            guard let username = Usernames.validate(body.username) else {
                throw APIError.invalidField(
                    .invalidUsername, "Use 1 to 64 characters without spaces or control characters.")
            }
            let displayName = try ShownNames.displayName(body.displayName ?? username)
            var invitation: String?
            if let token = body.invitation {
                invitation = try await invitations.check(token: token, clientAddress: context.clientAddress)
            } else if sesame.configuration.signUp == .inviteOnly {
                throw APIError.invitationRequired
            }
            let email = try await sesame.signUpAddresses.check(
                body.email, account: Usernames.key(username), clientAddress: context.clientAddress)
            let handle = Secrets.random(64)
            let options = passkeyVerifier.relyingParty.makeCreationOptions(
                user: PublicKeyCredentialUserEntityJSON(id: handle, name: username, displayName: displayName),
                excludeCredentials: [], residentKey: .required
            )
            let (token, binding) = sesame.ceremonies.ceremonyToken(request)
            try await sesame.ceremonies.begin(
                .registration, challenge: options.challenge.bytes, binding: binding, userID: nil,
                payload: PendingAccount(
                    username: username, displayName: displayName, userHandle: Base64URL.encode(handle),
                    invitation: invitation, email: email),
                countedFor: context.clientAddress
            )
            // Checked after the start is counted, so probing for taken names spends the address's ceremony budget.
            // (The challenge stored for a taken name is never used and expires.)
            if try await store.user(usernameKey: Usernames.key(username)) != nil { throw APIError.usernameTaken }
            return sesame.ceremonies.options(options, ceremonyToken: token)
        }

        router.post("/api/registration") { request, context in
            let body = try await request.decode(as: FinishRequest.self, context: context)
            let (_, binding) = sesame.ceremonies.ceremonyToken(request)
            let (challenge, record) = try await sesame.ceremonies.finish(
                .registration, clientDataJSON: body.credential.response.clientDataJSON.bytes, binding: binding
            )
            let pending = try sesame.ceremonies.payload(record, as: PendingAccount.self)
            // The setting may have changed since the options step (or differ on the node that gave them).
            switch sesame.configuration.signUp {
            case .closed: throw APIError.signUpClosed
            case .inviteOnly where pending.invitation == nil: throw APIError.invitationRequired
            default: break
            }
            guard let handle = try? Base64URL.decode(pending.userHandle) else { throw APIError.challengeInvalid }
            let result = try await passkeyVerifier.verifyRegistration(
                body.credential, challenge: challenge, expires: record.expiresAt, username: pending.username,
                context: context
            )
            let user = User(
                id: UUID().uuidString.lowercased(), username: pending.username, displayName: pending.displayName,
                userHandle: handle,
                disabled: false, createdAt: sesame.now
            )
            let credential = try passkeyVerifier.storedCredential(result, user: user, name: body.name)
            let issued = sesame.sessions.prepare(
                user: user, method: .passkey(userVerified: result.credential.uvInitialized),
                passkeyBackupEligible: result.credential.backupEligible, request: request)
            let event = sesame.audit.event(.signUpPasskey, .success, user: user, clientAddress: context.clientAddress)
            let spend = spending(pending.invitation, user: user, clientAddress: context.clientAddress)
            let addresses = sesame.signUpAddresses
            let clientAddress = context.clientAddress
            let language = sesame.languages.tag(for: request, saved: nil)
            // The address the options step checked: kept pending with its mail in the account's transaction.
            var address: (@Sendable (any SQLDatabase) async throws -> Void)? = nil
            if let email = pending.email {
                address = { db in
                    try await addresses.begin(
                        email, user: user, clientAddress: clientAddress, at: user.createdAt, language: language, in: db)
                }
            }
            // The first account on an empty server joins the administrators' group, when the setting asks for it.
            var admin: (@Sendable (any SQLDatabase) async throws -> Void)? = nil
            if let firstAdmin {
                admin = { db in
                    _ = try await firstAdmin.claim(user: user, clientAddress: clientAddress, at: user.createdAt, in: db)
                }
            }
            // The invitation spent (and its groups joined), the address kept and the first admin made, with the
            // account or not at all.
            let also = Self.together([spend, address, admin])
            switch try await store.createAccount(
                user, credential: credential, audit: event, sessionTokenHash: issued.tokenHash, session: issued.record,
                also: also)
            {
            case .created: break
            case .usernameTaken: throw APIError.usernameTaken
            case .credentialExists: throw APIError.credentialExists
            }
            sesame.audit.counted(event)
            var response = sesame.sessions.signedIn(issued, user: user, request: request, status: .created)
            response.headers.append(sesame.rememberDevice(user: user, request: request))
            return response
        }
    }
}
