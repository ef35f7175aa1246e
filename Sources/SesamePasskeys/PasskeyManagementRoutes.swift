import Foundation
import Hummingbird
import WebAuthn
import SesameCore
import SesameMetadata

/// A signed-in account's passkeys: list, rename, delete, add (a passkey or a security key), and the Signal API
/// payloads a page sends after changes (`PublicKeyCredential.signalAllAcceptedCredentials` /
/// `signalCurrentUserDetails`). Adding and deleting are sensitive (a recent sign-in); adding is checked at its
/// options step, whose single-use challenge is bound to the session (see docs/server.md, "Re-authentication").
package struct PasskeyManagementRoutes {
    package let sesame: ServerCore
    package let store: any PasskeyStorage
    package let passkeyVerifier: PasskeyVerifier
    package let metadataService: MetadataService

    package init(
        sesame: ServerCore, store: any PasskeyStorage, passkeyVerifier: PasskeyVerifier,
        metadataService: MetadataService
    ) {
        self.sesame = sesame
        self.store = store
        self.passkeyVerifier = passkeyVerifier
        self.metadataService = metadataService
    }

    package struct PasskeyBody: Codable, Sendable {
        /// Credential ID, base64url.
        package let id: String
        package let name: String
        /// Provider name from the AAGUID when known (e.g. "Google Password Manager").
        package let provider: String?
        /// Same-origin path of the provider's icon (`/providers/{aaguid}/icon`, add `?theme=dark` for dark
        /// backgrounds); absent when the provider or its icon is unknown.
        package let providerIcon: String?
        package let aaguid: String?
        package let createdAt: Date
        package let lastUsedAt: Date?
        /// BE flag: the credential may be synced.
        package let backupEligible: Bool
        /// BS flag: the credential is synced (backed up).
        package let backedUp: Bool
        package let transports: [String]

        /// `metadata`: the FIDO metadata in force, which names models the provider list does not.
        package init(_ c: StoredCredential, providers: AuthenticatorProviders, metadata: MetadataIndex?) {
            id = Base64URL.encode(c.id)
            name = c.name
            aaguid = c.aaguid.flatMap(ProviderNames.uuidString)
            provider =
                aaguid.flatMap { ProviderNames.provider(for: $0, in: providers)?.name }
                ?? c.aaguid.flatMap { AAGUID(bytes: $0) }.flatMap { metadata?.entry(aaguid: $0)?.name }
            providerIcon = aaguid.flatMap { ProviderNames.iconPath(for: $0, in: providers) }
            createdAt = c.createdAt
            lastUsedAt = c.lastUsedAt
            backupEligible = c.backupEligible
            backedUp = c.backedUp
            transports = c.transports
        }
    }

    package struct RenameRequest: Decodable, Sendable { package let name: String }

    /// What the page passes to the Signal API (WebAuthn Level 3 §5.1.10), with the user ID in base64url.
    package struct SignalsBody: ResponseEncodable, Sendable {
        package struct AllAccepted: Codable, Sendable {
            package let rpId: String
            package let userId: String
            package let allAcceptedCredentialIds: [String]
        }
        package struct CurrentUser: Codable, Sendable {
            package let rpId: String
            package let userId: String
            package let name: String
            package let displayName: String
        }
        package let allAcceptedCredentials: AllAccepted
        package let currentUserDetails: CurrentUser
    }

    /// `POST /api/account/passkeys/options` body, optional: `{"kind": "passkey" | "security-key",
    /// "mediation": "conditional"}`. `mediation` says the page will pass the options to a conditional create
    /// (the automatic upgrade after a password sign-in), whose response may come without the UP flag.
    package struct AddOptionsRequest: Decodable, Sendable {
        package let kind: String?
        package let mediation: String?
    }

    package struct AddRequest: Decodable, Sendable {
        package let credential: RegistrationResponseJSON
        package let name: String?
    }

    /// Kept with an add-passkey challenge: the account, and whether the options were for a conditional create.
    package struct PendingPasskey: Codable, Sendable {
        package let userID: String
        package let conditional: Bool
    }

    /// What the add-passkey options ask the browser for. A passkey (the default) is a discoverable credential,
    /// so it can sign in without a username. A security key is asked for a server-side credential
    /// (`residentKey: "discouraged"`, cross-platform, hint `security-key`): keys without resident-key storage
    /// (CTAP2 keys that keep none, U2F keys) can register it, and it signs in after the username is typed.
    package enum AddKind: Equatable, Sendable {
        case passkey, securityKey

        package init(_ body: AddOptionsRequest?) throws {
            switch body?.kind {
            case nil, "passkey": self = .passkey
            case "security-key": self = .securityKey
            default: throw APIError.invalidField(.invalidKind, "Use \"passkey\" or \"security-key\".")
            }
        }

        package var residentKey: ResidentKeyRequirement { self == .passkey ? .required : .discouraged }
        package var attachment: AuthenticatorAttachment? { self == .passkey ? nil : .crossPlatform }
        package var hints: [PublicKeyCredentialHint] { self == .passkey ? [] : [.securityKey] }
    }

    package struct PasskeyList: ResponseEncodable, Sendable {
        package let passkeys: [PasskeyBody]
        package func encode(to encoder: any Encoder) throws { try passkeys.encode(to: encoder) }
    }

    package func register(on router: Router<SesameRequestContext>) {
        let signedIn = router.group("/api/account", context: SignedInRequestContext.self)
        let sensitive = router.group("/api/account", context: RecentlySignedInRequestContext.self)
        // Listing and adding passkeys: a limited session from recovery by email may too (it exists to add one).
        let anySession = router.group("/api/account", context: LimitedSessionRequestContext.self)
        let enrolment = router.group("/api/account", context: PasskeyEnrolmentRequestContext.self)

        anySession.get("/passkeys") { _, context in
            let metadata = await metadataService.current()
            return PasskeyList(
                passkeys: try await store.credentials(userID: context.user.id).map {
                    PasskeyBody($0, providers: sesame.providers, metadata: metadata)
                })
        }

        signedIn.patch("/passkeys/{id}") { request, context in
            let id = try credentialID(context)
            let name = try ShownNames.passkeyName(
                try await request.decode(as: RenameRequest.self, context: context).name)
            guard try await store.renameCredential(userID: context.user.id, id: id, name: name) else {
                throw APIError.notFound
            }
            await sesame.audit.record(.passkeyRenamed, .success, user: context.user, context: context)
            return Status(status: "renamed")
        }

        sensitive.delete("/passkeys/{id}") { request, context in
            let id = try credentialID(context)
            let notice = await sesame.notice(.passkeyRemoved, user: context.user, request: request, context: context)
            // The last administrator's last passkey stays (`last_administrator`), as it does for an operator.
            switch try await store.deleteCredential(
                userID: context.user.id, id: id, notice: notice, administrators: sesame.administrators)
            {
            case .removed:
                await sesame.audit.record(.passkeyRemoved, .success, user: context.user, context: context)
                return Status(status: "removed")
            case .notFound: throw APIError.notFound
            case .lastWayIn: throw APIError.lastWayIn
            }
        }

        signedIn.get("/signals") { _, context in
            let user = context.user
            let ids = try await store.credentials(userID: user.id).map { Base64URL.encode($0.id) }
            let userID = Base64URL.encode(user.userHandle)
            let rp = sesame.configuration.rpID
            return SignalsBody(
                allAcceptedCredentials: .init(rpId: rp, userId: userID, allAcceptedCredentialIds: ids),
                currentUserDetails: .init(rpId: rp, userId: userID, name: user.username, displayName: user.displayName)
            )
        }

        // Adding a way in is sensitive; the finish step is bound to these options (session, expiry).
        enrolment.post("/passkeys/options") { request, context in
            let body = try await request.decodeIfPresent(as: AddOptionsRequest.self, context: context)
            let kind = try AddKind(body)
            // Conditional create saves a passkey in the browser's credential manager without a prompt; a security
            // key is never made that way.
            let conditional: Bool
            switch body?.mediation {
            case nil: conditional = false
            case "conditional" where kind == .passkey: conditional = true
            default:
                throw APIError.invalidField(
                    .invalidMediation, "Leave mediation out, or use \"conditional\" for a passkey.")
            }
            let user = context.user
            let options = passkeyVerifier.relyingParty.makeCreationOptions(
                user: PublicKeyCredentialUserEntityJSON(
                    id: user.userHandle, name: user.username, displayName: user.displayName),
                excludeCredentials: PasskeyVerifier.descriptors(try await store.credentials(userID: user.id)),
                residentKey: kind.residentKey, authenticatorAttachment: kind.attachment, hints: kind.hints
            )
            try await sesame.ceremonies.begin(
                .addPasskey, challenge: options.challenge.bytes,
                binding: Ceremonies.sessionBinding(context.authentication), userID: user.id,
                payload: PendingPasskey(userID: user.id, conditional: conditional), countedFor: context.clientAddress
            )
            return sesame.ceremonies.options(options, ceremonyToken: nil)
        }

        anySession.post("/passkeys") { request, context in
            let body = try await request.decode(as: AddRequest.self, context: context)
            let user = context.user
            let (challenge, record) = try await sesame.ceremonies.finish(
                .addPasskey, clientDataJSON: body.credential.response.clientDataJSON.bytes,
                binding: Ceremonies.sessionBinding(context.authentication)
            )
            let pending = try sesame.ceremonies.payload(record, as: PendingPasskey.self)
            guard record.userID == user.id, pending.userID == user.id else { throw APIError.challengeInvalid }
            // Only a challenge issued for a conditional create may come back without user presence (WebAuthn L3
            // §7.1 step 15); every other one must have the UP flag.
            let result = try await passkeyVerifier.verifyRegistration(
                body.credential, challenge: challenge, expires: record.expiresAt, username: user.username,
                mediation: pending.conditional ? .conditional : nil, context: context
            )
            let credential = try passkeyVerifier.storedCredential(result, user: user, name: body.name)
            do {
                try await store.addCredential(
                    credential, notice: sesame.notice(.passkeyAdded, user: user, request: request, context: context))
            } catch StoreError.conflict {
                throw APIError.credentialExists
            }
            await sesame.audit.record(.passkeyAdded, .success, user: user, context: context)
            return EditedResponse(
                status: .created,
                response: JSONBody(
                    PasskeyBody(credential, providers: sesame.providers, metadata: await metadataService.current())))
        }
    }

    private func credentialID(_ context: some RequestContext) throws -> [UInt8] {
        let text = try context.parameters.require("id")
        guard text.utf8.count <= 1400, let id = try? Base64URL.decode(text), !id.isEmpty else {
            throw APIError.invalidField(.invalidCredentialID, "The credential ID is not base64url.")
        }
        return id
    }
}
