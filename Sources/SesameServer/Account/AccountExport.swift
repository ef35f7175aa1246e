import Foundation
import WebAuthn

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
///   "account": { id, username, displayName, userHandle (base64url), createdAt, disabled },
///   "passkeys": [ { id (base64url), name, provider?, aaguid?, publicKey (COSE_Key, base64url), signCount,
///                   createdAt, lastUsedAt?, backupEligible, backedUp, userVerified, attestationFormat,
///                   transports } ],
///   "password": { "set": bool },
///   "authenticatorApp": { "confirmed": bool } | null,
///   "phone": { "number": string, "confirmed": bool } | null,
///   "recoveryCodes": { "remaining": int },
///   "sessions": [ { id, createdAt, lastSeenAt, expiresAt, authenticatedAt, userAgent, method } ],
///   "apps": [ { clientID, name?, scope, grantedAt } ],
///   "auditEvents": [ { at, kind, outcome, clientAddress, detail } ] }          (newest first, all of them)
/// ```
struct AccountExport: Codable, Sendable {
    static let format = "sesame-account-export-1"

    struct Account: Codable, Sendable {
        let id: String
        let username: String
        let displayName: String
        let userHandle: String
        let createdAt: Date
        let disabled: Bool
    }

    struct Passkey: Codable, Sendable {
        let id: String
        let name: String
        let provider: String?
        let aaguid: String?
        let publicKey: String
        let signCount: UInt32
        let createdAt: Date
        let lastUsedAt: Date?
        let backupEligible: Bool
        let backedUp: Bool
        let userVerified: Bool
        let attestationFormat: String
        let transports: [String]
    }

    struct Password: Codable, Sendable { let set: Bool }
    struct AuthenticatorApp: Codable, Sendable { let confirmed: Bool }
    struct Phone: Codable, Sendable {
        let number: String
        let confirmed: Bool
    }
    struct RecoveryCodes: Codable, Sendable { let remaining: Int }

    struct Session: Codable, Sendable {
        let id: String
        let createdAt: Date
        let lastSeenAt: Date
        let expiresAt: Date
        let authenticatedAt: Date
        let userAgent: String
        let method: String
    }

    struct App: Codable, Sendable {
        let clientID: String
        let name: String?
        let scope: String
        let grantedAt: Date
    }

    struct Event: Codable, Sendable {
        let at: Date
        let kind: String
        let outcome: String
        let clientAddress: String
        let detail: String
    }

    let format: String
    let exportedAt: Date
    let account: Account
    let passkeys: [Passkey]
    let password: Password
    let authenticatorApp: AuthenticatorApp?
    let phone: Phone?
    let recoveryCodes: RecoveryCodes
    let sessions: [Session]
    let apps: [App]
    let auditEvents: [Event]

    /// Every audit event of the account is exported; this bounds one export's size all the same.
    static let auditLimit = 100_000

    static func build(
        for user: User, store: any Store, providers: AuthenticatorProviders, now: Date, fullPhoneNumber: Bool
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
        let phone = try await store.sms(userID: user.id)
        return AccountExport(
            format: format, exportedAt: now,
            account: Account(
                id: user.id, username: user.username, displayName: user.displayName,
                userHandle: Base64URL.encode(user.userHandle), createdAt: user.createdAt, disabled: user.disabled),
            passkeys: passkeys,
            password: Password(set: try await store.password(userID: user.id) != nil),
            authenticatorApp: try await store.totp(userID: user.id).map { AuthenticatorApp(confirmed: $0.confirmed) },
            phone: phone.map {
                Phone(number: fullPhoneNumber ? $0.phone : lastDigits($0.phone), confirmed: $0.confirmed)
            },
            recoveryCodes: RecoveryCodes(remaining: try await store.unusedRecoveryCodeCount(userID: user.id)),
            sessions: try await store.sessions(userID: user.id, now: now).map {
                Session(
                    id: $0.id, createdAt: $0.createdAt, lastSeenAt: $0.lastSeenAt, expiresAt: $0.expiresAt,
                    authenticatedAt: $0.authenticatedAt, userAgent: $0.userAgent, method: $0.method)
            },
            apps: apps,
            auditEvents: try await store.auditEvents(userID: user.id, limit: auditLimit).map {
                Event(at: $0.at, kind: $0.kind, outcome: $0.outcome, clientAddress: $0.clientAddress, detail: $0.detail)
            }
        )
    }

    /// `+15555550123` → `•••••••••23`: the last two digits, every other character hidden.
    static func lastDigits(_ phone: String) -> String {
        String(repeating: "•", count: max(0, phone.count - 2)) + phone.suffix(2)
    }

    /// The document as a file: ISO 8601 dates, sorted keys, indented.
    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
