import Foundation
import WebAuthn
import SesameCore
import SesameEmail
import SesamePasskeys
import SesameIdentityProvider
import SesamePasswords
import SesameSecondFactors

/// "Download my data" (`GET /api/account/export`) and `sesame users export NAME`: everything Sesame holds about one
/// person, as one JSON document, without anything that would let its reader sign in as them or open a factor.
///
/// Left out on purpose: the password hash and salt, the TOTP secret, recovery-code hashes, session and refresh
/// token hashes, challenges and rate-limit counters (keyed by hashes, not by person). Passkeys' public keys are in
/// (they are not secret). The phone number is shown in full to the operator (`sesame users export`) and with only
/// its last two digits on the web, where a stolen session should not learn a number to take over.
///
/// ```
/// { "format": "sesame-account-export-1", "exportedAt": date,
///   "account": { id, username, displayName, userHandle (base64url), createdAt, disabled, language? },
///   "passkeys": [ { id (base64url), name, provider?, aaguid?, publicKey (COSE_Key, base64url), signCount,
///                   createdAt, lastUsedAt?, backupEligible, backedUp, userVerified, attestationFormat,
///                   transports } ],
///   "password": { "set": bool },
///   "email": { "address": string | null, "verified": bool, "verifiedAt": date?, "pending": string? } | null,
///   …the second factors' fields (`SecondFactorsExport`: authenticatorApp, phone, recoveryCodes),
///   "sessions": [ { id, createdAt, lastSeenAt, expiresAt, authenticatedAt, userAgent, method } ],
///   "groups": [ slug ],                                                          (sorted)
///   "apps": [ { clientID, name?, scope, grantedAt } ],
///   "auditEvents": [ { at, kind, outcome, clientAddress, detail } ] }          (newest first, all of them)
/// ```
package struct AccountExport: Codable, Sendable {
    package static let format = "sesame-account-export-1"

    package struct Account: Codable, Sendable {
        package let id: String
        package let username: String
        package let displayName: String
        package let userHandle: String
        package let createdAt: Date
        package let disabled: Bool
        /// The language the person saved on their account page (a catalog tag); absent: the browser's choice.
        package let language: String?
    }

    package struct Passkey: Codable, Sendable {
        package let id: String
        package let name: String
        package let provider: String?
        package let aaguid: String?
        package let publicKey: String
        package let signCount: UInt32
        package let createdAt: Date
        package let lastUsedAt: Date?
        package let backupEligible: Bool
        package let backedUp: Bool
        package let userVerified: Bool
        package let attestationFormat: String
        package let transports: [String]
    }

    package struct Password: Codable, Sendable { package let set: Bool }
    /// The verified address (null until one is) and a new one waiting for its verification.
    package struct Email: Codable, Sendable {
        package let address: String?
        package let verified: Bool
        package let verifiedAt: Date?
        package let pending: String?
    }

    package struct Session: Codable, Sendable {
        package let id: String
        package let createdAt: Date
        package let lastSeenAt: Date
        package let expiresAt: Date
        package let authenticatedAt: Date
        package let userAgent: String
        package let method: String
    }

    package struct App: Codable, Sendable {
        package let clientID: String
        package let name: String?
        package let scope: String
        package let grantedAt: Date
    }

    package struct Event: Codable, Sendable {
        package let at: Date
        package let kind: String
        package let outcome: String
        package let clientAddress: String
        package let detail: String
    }

    package let format: String
    package let exportedAt: Date
    package let account: Account
    package let passkeys: [Passkey]
    package let password: Password
    package let email: Email?
    /// The second factors' part, written at the top level of the document (`SecondFactorsExport`).
    package let secondFactors: SecondFactorsExport
    package let sessions: [Session]
    /// The slugs of the groups the person is in.
    package let groups: [String]
    package let apps: [App]
    package let auditEvents: [Event]

    /// Every audit event of the account is exported; this bounds one export's size all the same.
    package static let auditLimit = 100_000

    package static func build(
        for user: User, store: any AccountStorage, groups: any AccountGroups, providers: AuthenticatorProviders,
        now: Date, fullPhoneNumber: Bool
    ) async throws -> AccountExport {
        let passkeys = try await store.credentials(userID: user.id).map { c in
            let aaguid = c.aaguid.flatMap(ProviderNames.uuidString)
            return Passkey(
                id: Base64URL.encode(c.id), name: c.name,
                provider: aaguid.flatMap { ProviderNames.provider(for: $0, in: providers)?.name }, aaguid: aaguid,
                publicKey: Base64URL.encode(c.publicKey), signCount: c.signCount, createdAt: c.createdAt,
                lastUsedAt: c.lastUsedAt, backupEligible: c.backupEligible, backedUp: c.backedUp,
                userVerified: c.userVerified, attestationFormat: c.attestationFormat, transports: c.transports)
        }
        var apps: [App] = []
        for consent in try await store.consents(userID: user.id) {
            apps.append(
                App(
                    clientID: consent.clientID, name: try await store.client(id: consent.clientID)?.name,
                    scope: consent.scope, grantedAt: consent.grantedAt))
        }
        return AccountExport(
            format: format, exportedAt: now,
            account: Account(
                id: user.id, username: user.username, displayName: user.displayName,
                userHandle: Base64URL.encode(user.userHandle), createdAt: user.createdAt, disabled: user.disabled,
                language: try await store.savedLanguage(userID: user.id)),
            passkeys: passkeys,
            password: Password(set: try await store.password(userID: user.id) != nil),
            email: try await store.email(userID: user.id).map {
                Email(address: $0.address, verified: $0.address != nil, verifiedAt: $0.verifiedAt, pending: $0.pending)
            },
            secondFactors: try await SecondFactorsExport.build(
                userID: user.id, store: store, fullPhoneNumber: fullPhoneNumber),
            sessions: try await store.sessions(userID: user.id, now: now).map {
                Session(
                    id: $0.id, createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt, expiresAt: $0.expiresAt,
                    authenticatedAt: $0.authenticatedAt, userAgent: $0.userAgent, method: $0.method)
            },
            groups: try await groups.groupSlugs(userID: user.id),
            apps: apps,
            auditEvents: try await store.auditEvents(userID: user.id, limit: auditLimit).map {
                Event(at: $0.at, kind: $0.kind, outcome: $0.outcome, clientAddress: $0.clientAddress, detail: $0.detail)
            }
        )
    }

    private enum CodingKeys: String, CodingKey {
        case format, exportedAt, account, passkeys, password, email, sessions, groups, apps, auditEvents
    }

    package init(
        format: String, exportedAt: Date, account: Account, passkeys: [Passkey], password: Password, email: Email?,
        secondFactors: SecondFactorsExport, sessions: [Session], groups: [String], apps: [App], auditEvents: [Event]
    ) {
        self.format = format
        self.exportedAt = exportedAt
        self.account = account
        self.passkeys = passkeys
        self.password = password
        self.email = email
        self.secondFactors = secondFactors
        self.sessions = sessions
        self.groups = groups
        self.apps = apps
        self.auditEvents = auditEvents
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            format: try c.decode(String.self, forKey: .format),
            exportedAt: try c.decode(Date.self, forKey: .exportedAt),
            account: try c.decode(Account.self, forKey: .account),
            passkeys: try c.decode([Passkey].self, forKey: .passkeys),
            password: try c.decode(Password.self, forKey: .password),
            email: try c.decodeIfPresent(Email.self, forKey: .email),
            secondFactors: try SecondFactorsExport(from: decoder),
            sessions: try c.decode([Session].self, forKey: .sessions),
            groups: try c.decode([String].self, forKey: .groups),
            apps: try c.decode([App].self, forKey: .apps), auditEvents: try c.decode([Event].self, forKey: .auditEvents)
        )
    }

    /// The document's own fields and, beside them at the top level, the second factors' part; an absent optional is
    /// left out, as synthesised encoding does.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format)
        try c.encode(exportedAt, forKey: .exportedAt)
        try c.encode(account, forKey: .account)
        try c.encode(passkeys, forKey: .passkeys)
        try c.encode(password, forKey: .password)
        try c.encodeIfPresent(email, forKey: .email)
        try c.encode(sessions, forKey: .sessions)
        try c.encode(groups, forKey: .groups)
        try c.encode(apps, forKey: .apps)
        try c.encode(auditEvents, forKey: .auditEvents)
        try secondFactors.encode(to: encoder)
    }

    /// The document as a file: ISO 8601 dates, sorted keys, indented.
    package func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// What the account feature reads: the core's store, and each feature's rows it shows the person (passwords, second
/// factors, the apps they allowed), with its own saved languages.
package typealias AccountStorage = IdentityProviderStorage & PasskeyStorage & PasswordStore & SecondFactorStore
    & EmailStore & AccountLanguageStore
