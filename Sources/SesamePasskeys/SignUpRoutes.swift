import Foundation
import Hummingbird
import WebAuthn
import SQLKit
import SesameCore

/// Passkey sign-up: `POST /api/registration/options {username, displayName?}` → creation options (a new random
/// user handle, resident key required) bound to the ceremony token; `POST /api/registration {credential}` verifies
/// the new passkey and creates the account, its passkey, the audit event and a session in one transaction.
package struct SignUpRoutes {
    package let sesame: ServerCore
    package let store: any PasskeyStorage
    package let passkeyVerifier: PasskeyVerifier

    package init(sesame: ServerCore, store: any PasskeyStorage, passkeyVerifier: PasskeyVerifier) {
        self.sesame = sesame
        self.store = store
        self.passkeyVerifier = passkeyVerifier
    }

    package struct OptionsRequest: Decodable, Sendable {
        package let username: String
        package let displayName: String?
        /// The account's email address, where the `email` setting asks for one (`SignUpAddresses`).
        package let email: String?
    }

    /// Kept with a sign-up challenge: the account to create when the response verifies.
    package struct PendingAccount: Codable, Sendable {
        package let username: String
        package let displayName: String
        package let userHandle: String
        /// The address to verify, checked at the options step; nil when none was given (and for challenges stored
        /// before sign-up asked for one).
        package var email: String? = nil
    }

    package struct FinishRequest: Decodable, Sendable {
        package let credential: RegistrationResponseJSON
        /// Optional name for the passkey.
        package let name: String?
    }

    package func register(on router: Router<SesameRequestContext>) {
        router.post("/api/registration/options") { request, context in
            let body = try await request.decode(as: OptionsRequest.self, context: context)
            guard let username = Usernames.validate(body.username) else {
                throw APIError.invalidField(
                    .invalidUsername, "Use 1 to 64 characters without spaces or control characters.")
            }
            let displayName = try ShownNames.displayName(body.displayName ?? username)
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
                    username: username, displayName: displayName, userHandle: Base64URL.encode(handle), email: email),
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
            let addresses = sesame.signUpAddresses
            let clientAddress = context.clientAddress
            // The address the options step checked: kept pending with its mail in the account's transaction.
            var address: (@Sendable (any SQLDatabase) async throws -> Void)? = nil
            if let email = pending.email {
                address = { db in
                    try await addresses.begin(
                        email, user: user, clientAddress: clientAddress, at: user.createdAt, in: db)
                }
            }
            switch try await store.createAccount(
                user, credential: credential, audit: event, sessionTokenHash: issued.tokenHash, session: issued.record,
                also: address)
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
