import Foundation
import Logging
import WebAuthn
import SesameCore
import SesameEmail
import SesameGroups
import SesameAccount
import SesameIdentityProvider
import SesamePasskeys
import SesamePasswords
import SesameSecondFactors

/// What the admin commands (`sesame users`, `sesame audit`) do, over the same store as the server.
/// Output is plain text lines; nothing secret (no hashes, keys or tokens) is printed.
public struct Admin: Sendable {
    package let store: any AccountStorage
    /// The server's origin, the issuer of its tokens: with it, disabling an account sends back-channel logout
    /// tokens to the applications that registered for them.
    package let issuer: String?
    package let logoutDelivery: any LogoutDelivery
    /// The groups accounts are in, for `users show` and `users export`, and the last-administrator rule.
    package let groups: any AccountGroups
    /// The administrators' group (the `adminGroup` setting): `users create --admin` puts the account there, and
    /// nobody can lock everyone out of it (`PeopleService`).
    package let adminGroup: String

    package init(
        store: any AccountStorage, issuer: String? = nil, logoutDelivery: any LogoutDelivery = HTTPLogoutDelivery(),
        groups: any AccountGroups = NoAccountGroups(), adminGroup: String = "admins"
    ) {
        self.store = store
        self.issuer = issuer
        self.logoutDelivery = logoutDelivery
        self.groups = groups
        self.adminGroup = adminGroup
    }

    /// The rules the admin API shares (`PeopleService`), over the same store; their refusals become the
    /// command's (`AdminError`, the API's message).
    private func people<T>(_ body: (PeopleService) async throws -> T) async throws -> T {
        guard let sql = store as? SQLStore else { throw AdminError(description: "no database store") }
        do {
            return try await body(PeopleService(store: sql, groups: groups, adminGroup: adminGroup))
        } catch let error as APIError {
            throw AdminError(description: error.message)
        }
    }

    private static let dateFormat = Date.ISO8601FormatStyle()

    /// The second factors an account has set up (as `FactorVerifier.available`).
    private func secondFactors(_ user: User) async throws -> [String] {
        try await FactorVerifier.factorsSetUp(userID: user.id, store: store).map(\.rawValue)
    }

    /// Finds an account by username (any case) or by id.
    package func find(_ reference: String) async throws -> User {
        if let user = try await store.user(usernameKey: Usernames.key(reference)) { return user }
        if let user = try await store.user(id: reference) { return user }
        throw AdminError(description: "no account \"\(reference.prefix(64))\"")
    }

    /// Creates an account with a password (for operators and test setups; people sign up with a passkey). With
    /// `administrator`, the account is put in `adminGroup` too (the group made when missing).
    public func createUser(
        _ username: String, displayName: String?, password: String, scryptLogN: Int, administrator: Bool = false
    ) async throws -> String {
        guard let name = Usernames.validate(username) else { throw AdminError(description: "invalid username") }
        if let problem = PasswordHasher.check(password) {
            throw AdminError(
                description: problem == .tooShort
                    ? "password shorter than \(PasswordHasher.minimumLength) characters" : "password too long")
        }
        let user = User(
            id: UUID().uuidString.lowercased(), username: name, displayName: displayName ?? name,
            userHandle: Secrets.random(64),
            disabled: false, createdAt: Date()
        )
        let record = try PasswordHasher(logN: scryptLogN).hash(password)
        do {
            try await store.createUser(
                user, password: record, audit: AuditEvent.byOperator(.adminCreated, .success, user: user))
        } catch StoreError.conflict {
            throw AdminError(description: "username \(name) is taken")
        }
        guard administrator else { return "\(user.username) created (\(user.id))" }
        guard let sql = store as? SQLStore else { throw AdminError(description: "no database store") }
        let admins = GroupsAdmin(store: sql, adminGroup: adminGroup)
        if try await sql.group(slug: adminGroup) == nil { try await admins.add(adminGroup, name: nil, claims: nil) }
        try await admins.addMember(user.id, to: adminGroup)
        return "\(user.username) created (\(user.id)) and added to \(adminGroup)"
    }

    public func listUsers() async throws -> [String] {
        var lines: [String] = []
        for user in try await store.users() {
            let passkeys = try await store.credentials(userID: user.id).count
            let password = try await store.password(userID: user.id) != nil
            lines.append(
                "\(user.id)  \(user.username)  passkeys=\(passkeys) password=\(password ? "yes" : "no")\(user.disabled ? "  DISABLED" : "")"
            )
        }
        return lines
    }

    public func showUser(_ reference: String) async throws -> String {
        let user = try await find(reference)
        var lines = [
            "id:           \(user.id)",
            "username:     \(user.username)",
            "display name: \(user.displayName)",
            "created:      \(user.createdAt.formatted(Self.dateFormat))",
            "disabled:     \(user.disabled ? "yes" : "no")",
            "password:     \(try await store.password(userID: user.id) != nil ? "yes" : "no")",
            "second factors: \(try await secondFactors(user).joined(separator: ", "))",
            "email:        \(Self.describe(try await store.email(userID: user.id)))",
            "groups:       \(try await groups.groupSlugs(userID: user.id).joined(separator: ", "))",
            "passkeys:",
        ]
        for credential in try await store.credentials(userID: user.id) {
            lines.append(
                "  \(Base64URL.encode(credential.id))  \(credential.name)  created \(credential.createdAt.formatted(Self.dateFormat))"
                    + "  last used \(credential.lastUsedAt.map { $0.formatted(Self.dateFormat) } ?? "never")"
                    + "  synced=\(credential.backedUp ? "yes" : "no")"
                    + "  uv=\(credential.userVerified ? "yes" : "no")  format=\(credential.attestationFormat)"
                    + "  transports=\(credential.transports.joined(separator: ","))"
            )
        }
        lines.append("sessions:")
        for session in try await store.sessions(userID: user.id, now: Date()) {
            lines.append(
                "  \(session.id)  \(session.method)  since \(session.createdAt.formatted(Self.dateFormat))  \(session.userAgent.prefix(60))"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The address line of `showUser`: the verified address and a pending one, each said as such.
    package static func describe(_ email: EmailRecord?) -> String {
        var parts: [String] = []
        if let address = email?.address { parts.append("\(address) (verified)") }
        if let pending = email?.pending { parts.append("\(pending) (pending)") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }

    /// Disabling ends the account's sessions and its apps' grants (their refresh and access tokens), then tells
    /// the apps that registered for back-channel logout (found first, while their grants are live).
    public func setDisabled(_ reference: String, _ disabled: Bool) async throws -> String {
        let user = try await find(reference)
        guard disabled else {
            _ = try await people { try await $0.enable(user.id, by: .commandLine) }
            return "\(user.username) enabled"
        }
        var logout: BackChannelLogout?
        if let issuer, let sql = store as? SQLStore {
            let keyring = SigningKeyring(store: store, ciphers: sql.ciphers, clock: .system, longestTokenLifetime: 0)
            let secret = try await store.serverSecret(
                named: ServerSecret.name, generate: ServerSecret.generate, now: Date())
            logout = BackChannelLogout(
                keyring: keyring, issuer: issuer, store: store, clock: .system,
                subjects: SubjectIdentifiers(serverSecret: secret), delivery: logoutDelivery,
                logger: Logger(label: "sesame.admin"))
        }
        let told = try await people { try await $0.disable(user.id, by: .commandLine, logout: logout).appsTold }
        return "\(user.username) disabled and signed out everywhere"
            + (told > 0 ? "; back-channel logout sent to \(told) app(s)" : "")
    }

    public func deleteUser(_ reference: String) async throws -> String {
        let user = try await find(reference)
        _ = try await people { try await $0.delete(user.id, confirm: nil, by: .commandLine) }
        return "\(user.username) deleted"
    }

    /// `sesame users export NAME`: the account's `AccountExport` document (the phone number in full; no secrets),
    /// with the providers of `providerListFile` when one is configured. The export is audited.
    public func exportUser(_ reference: String, providerListFile: String?) async throws -> String {
        let user = try await find(reference)
        let document = try await AccountExport.build(
            for: user, store: store, groups: groups, providers: try ProviderNames.load(providerListFile), now: Date(),
            fullPhoneNumber: true)
        let text = String(decoding: try document.json(), as: UTF8.self)
        try await store.appendAudit(AuditEvent.byOperator(.adminExported, .success, user: user))
        return text
    }

    public func auditLines(user reference: String?, limit: Int, json: Bool) async throws -> [String] {
        var userID: String?
        if let reference { userID = try await find(reference).id }
        let events = try await store.auditEvents(userID: userID, limit: limit)
        if json {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.sortedKeys]
            return try events.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
        }
        return events.map {
            "\($0.at.formatted(Self.dateFormat))  \($0.kind)  \($0.outcome)  \($0.username ?? "-")  \($0.clientAddress)  \($0.detail)"
        }
    }
}

extension Admin {
    /// `sesame seal-keys status`: the key file's entries, then how many TOTP secrets and phone numbers each key
    /// holds. Key ids only (one-way functions of the keys), never key bytes.
    public func sealingStatus(keys: SealingKeyFile?) async throws -> [String] {
        var lines = [
            "key file: "
                + (keys.map { $0.descriptions.joined(separator: ", ") + " (the first seals)" }
                    ?? "none (the database key seals)")
        ]
        let counts = try await store.sealedSecretCounts()
        if counts.isEmpty { lines.append("no sealed secrets stored") }
        for count in counts {
            let key = count.key == "database" || count.key == "unrecognised" ? count.key : "file key \(count.key)"
            lines.append("\(count.purpose): \(count.count) under \(key) (\(count.state.rawValue))")
        }
        return lines
    }

    /// `sesame seal-keys rotate`: seals every stored secret again under the sealing key (the key file's first
    /// entry). Fails (after doing what it can) when some value cannot be opened.
    public func resealSecrets() async throws -> [String] {
        let report = try await store.resealSecrets()
        var lines = [
            "resealed \(report.resealed), already under the sealing key \(report.current), changed meanwhile \(report.changedMeanwhile)"
        ]
        lines += report.failures
        try await store.appendAudit(
            AuditEvent.byOperator(
                .adminResealed, report.failures.isEmpty ? .success : .failure, user: nil,
                detail: "resealed=\(report.resealed) failures=\(report.failures.count)"
            )
        )
        if !report.failures.isEmpty {
            throw AdminError(
                description: (lines + [
                    "\(report.failures.count) value(s) could not be opened; add the missing key to the key file and run again"
                ]).joined(separator: "\n"))
        }
        if report.changedMeanwhile > 0 { lines.append("run again to reseal the values that changed meanwhile") }
        return lines
    }
}
