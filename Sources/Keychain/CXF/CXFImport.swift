import Foundation
import OneTimeCode

/// What an import did.
public struct CXFImportReport: Sendable, Hashable {
    public var imported: [ItemKind: Int] = [:]
    /// Credentials of types the keychain does not keep (credit cards, Wi-Fi, addresses...), by type name.
    public var skippedTypes: [String: Int] = [:]
    /// Credentials already in the vault (same passkey, same password for the same sites, same code secret).
    public var duplicates = 0
    /// Credentials of a supported type that could not be imported, with the reason (never their content).
    public var failures: [String] = []

    public var importedCount: Int { imported.values.reduce(0, +) }
}

/// Import from the FIDO Credential Exchange Format (CXF 1.0, Proposed Standard 2025-08-14): a header document
/// (`{"version": {"major": 1, …}, "exporterRpId", …, "accounts": [account]}`) or a single account object
/// (`{"id", "username", …, "items": [item]}`), as 1Password and Dashlane export them.
///
/// Kept: `basic-auth` (a password per item, its sites from the item's `scope.urls`), `passkey` (PKCS #8 ES256 or
/// Ed25519 keys; the credential ID byte-exact; no sign counter is carried, the keychain's is always 0; the
/// `prf` secrets from `fido2Extensions.hmacCredentials`, CXF 1.0 §3.3.12.3), `totp`
/// (secret, algorithm, digits, period, issuer, account) and `note` (attached to the item's other credentials, or
/// nothing when alone). Other types are counted as skipped.
///
/// Tolerated, as exporters differ: older drafts' CamelCase type names (`BasicAuth`, `Passkey`, `TOTP`, `Note`)
/// next to the kebab-case ones; string members as bare strings or `EditableField` objects; `userName` for
/// `username`; padded base64url; a numeric `version` 0 or 1 from drafts before the `{major, minor}` form.
enum CXFImport {
    static let maximumSize = 64 * 1024 * 1024

    struct Candidate {
        let content: ItemContent
        let notes: String?
        let created: Date?
        let modified: Date?
    }

    static func parse(_ json: [UInt8], report: inout CXFImportReport) throws(KeychainError) -> [Candidate] {
        guard json.count <= maximumSize else {
            throw KeychainError(.invalidCXF, reason: "larger than \(maximumSize) bytes")
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw KeychainError(.invalidCXF, reason: "not JSON")
        }
        let top = try CXFObject(root, path: "document")
        var accounts: [CXFObject] = []
        if top.has("accounts") {
            try checkVersion(top)
            for (i, a) in try top.array("accounts", maximum: 10_000).enumerated() {
                accounts.append(try CXFObject(a, path: "accounts[\(i)]"))
            }
        } else if top.has("items") {
            accounts = [top]
        } else {
            throw KeychainError(.invalidCXF, reason: "neither a CXF header (accounts) nor an account (items)")
        }
        var out: [Candidate] = []
        for account in accounts {
            for (i, raw) in try account.array("items").enumerated() {
                let item = try CXFObject(raw, path: "\(account.path).items[\(i)]")
                out += try candidates(item, report: &report)
            }
        }
        return out
    }

    static func checkVersion(_ top: CXFObject) throws(KeychainError) {
        guard let version = top.members["version"] else {
            throw KeychainError(.invalidCXF, reason: "the header has no version")
        }
        if let object = version as? [String: Any] {
            guard let major = object["major"].flatMap({ try? CXFObject.integer($0, path: "version.major") }), major == 1
            else { throw KeychainError(.unsupportedCXFVersion, reason: "CXF major version is not 1") }
        } else {
            guard let n = try? CXFObject.integer(version, path: "version"), n == 0 || n == 1 else {
                throw KeychainError(.unsupportedCXFVersion, reason: "unknown CXF version")
            }
        }
    }

    /// `basic-auth`, `BasicAuth` and `basic_auth` all read as `basicauth`.
    static func normalisedType(_ name: String) -> String {
        String(name.lowercased().filter { $0 != "-" && $0 != "_" })
    }

    static func candidates(_ item: CXFObject, report: inout CXFImportReport) throws(KeychainError) -> [Candidate] {
        let created = try item.integer("creationAt").map { Date(timeIntervalSince1970: Double($0)) }
        let modified = try item.integer("modifiedAt").map { Date(timeIntervalSince1970: Double($0)) }
        let title = try item.string("title", maximum: ItemLimits.nameBytes)
        var sites: [String] = []
        if let scope = try item.object("scope") {
            for url in try scope.array("urls", maximum: ItemLimits.sites) {
                if let text = url as? String, let site = SiteName.normalise(text), !sites.contains(site) {
                    sites.append(site)
                }
            }
        }
        var credentials: [(String, CXFObject)] = []
        var notes: [String] = []
        for (i, raw) in try item.array("credentials", maximum: 1000).enumerated() {
            let credential = try CXFObject(raw, path: "\(item.path).credentials[\(i)]")
            let type = normalisedType(try credential.requiredString("type", maximum: 64))
            if type == "note" {
                if let content = try credential.string("content", maximum: ItemLimits.notesBytes), !content.isEmpty {
                    notes.append(content)
                }
            } else {
                credentials.append((type, credential))
            }
        }
        let note = notes.isEmpty ? nil : String(notes.joined(separator: "\n\n").prefix(ItemLimits.notesBytes / 4))
        var out: [Candidate] = []
        for (type, credential) in credentials {
            do throws(KeychainError) {
                let content: ItemContent
                switch type {
                case "basicauth":
                    var own = sites
                    for url in try credential.array("urls", maximum: ItemLimits.sites) {
                        if let text = url as? String, let site = SiteName.normalise(text), !own.contains(site) {
                            own.append(site)
                        }
                    }
                    guard !own.isEmpty else {
                        throw KeychainError(.invalidItem, reason: "a basic-auth credential without a site")
                    }
                    content = .password(
                        Password(
                            sites: own, username: try credential.string("username", "userName") ?? "",
                            password: try credential.requiredString("password", maximum: ItemLimits.passwordBytes)))
                case "passkey":
                    content = .passkey(try passkey(credential))
                case "totp":
                    content = .codeGenerator(try codeGenerator(credential, title: title, sites: sites))
                default:
                    report.skippedTypes[try credential.requiredString("type", maximum: 64), default: 0] += 1
                    continue
                }
                out.append(Candidate(content: content, notes: note, created: created, modified: modified))
            } catch {
                report.failures.append("\(credential.path) (\(type)): \(error.reason)")
            }
        }
        return out
    }

    static func passkey(_ c: CXFObject) throws(KeychainError) -> Passkey {
        let credentialId = try CXFBase64.decode(
            try c.requiredString("credentialId", maximum: 2048), field: "credentialId")
        let userHandle = try CXFBase64.decode(try c.requiredString("userHandle", maximum: 256), field: "userHandle")
        let der = try CXFBase64.decode(try c.requiredString("key", maximum: 8192), field: "key")
        guard let key = CredentialKey(pkcs8: der), let algorithm = key.passkeyAlgorithm else {
            throw KeychainError(.invalidItem, reason: "the passkey's key is not a PKCS #8 P-256 or Ed25519 key")
        }
        return Passkey(
            rpId: try c.requiredString("rpId", maximum: 253).lowercased(), credentialId: credentialId,
            userHandle: userHandle,
            userName: try c.string("username", "userName") ?? "", displayName: try c.string("userDisplayName") ?? "",
            algorithm: algorithm, privateKey: key.rawPrivateKey, hmacSecret: try hmacSecret(c),
            largeBlob: try largeBlob(c))
    }

    /// CXF 1.0 `fido2Extensions.largeBlob` (the `largeBlob` extension's blob): `data`, DEFLATE (RFC 1951) data,
    /// and `uncompressedSize`, which the inflated bytes must match, at most ``Passkey/largeBlobMaximum``. A blob
    /// that does not inflate, or to another size, fails the passkey rather than import it without its blob.
    static func largeBlob(_ c: CXFObject) throws(KeychainError) -> [UInt8]? {
        guard let extensions = try c.object("fido2Extensions"), let blob = try extensions.object("largeBlob")
        else { return nil }
        guard let size = try blob.integer("uncompressedSize"), (0...Int64(Passkey.largeBlobMaximum)).contains(size)
        else {
            throw KeychainError(
                .invalidItem, reason: "the passkey's largeBlob size is missing or over \(Passkey.largeBlobMaximum)")
        }
        let data = try CXFBase64.decode(try blob.requiredString("data", maximum: 16_384), field: "largeBlob data")
        let inflated = try Deflate.inflate(data, maximumOutput: Int(size))
        guard inflated.count == Int(size) else {
            throw KeychainError(.invalidItem, reason: "the passkey's largeBlob is not its stated size")
        }
        return inflated
    }

    /// CXF 1.0 `fido2Extensions.hmacCredentials` (the secrets of hmac-secret and `prf`): algorithm `hmac-sha256`,
    /// `credWithUV` and `credWithoutUV` of 32 bytes each. Other shapes fail the passkey rather than import it with
    /// its PRF silently changed (data a site encrypted with it would be lost).
    static func hmacSecret(_ c: CXFObject) throws(KeychainError) -> Passkey.HMACSecret? {
        guard let extensions = try c.object("fido2Extensions"), let hmac = try extensions.object("hmacCredentials")
        else { return nil }
        guard try hmac.requiredString("algorithm", maximum: 64) == "hmac-sha256" else {
            throw KeychainError(.invalidItem, reason: "the passkey's hmacCredentials algorithm is not hmac-sha256")
        }
        let withUV = try CXFBase64.decode(try hmac.requiredString("credWithUV", maximum: 256), field: "credWithUV")
        let withoutUV = try CXFBase64.decode(
            try hmac.requiredString("credWithoutUV", maximum: 256), field: "credWithoutUV")
        guard withUV.count == Passkey.HMACSecret.length, withoutUV.count == Passkey.HMACSecret.length else {
            throw KeychainError(.invalidItem, reason: "the passkey's hmacCredentials are not 32 bytes each")
        }
        return Passkey.HMACSecret(withUV: withUV, withoutUV: withoutUV)
    }

    static func codeGenerator(_ c: CXFObject, title: String?, sites: [String]) throws(KeychainError) -> CodeGenerator {
        do {
            let secret = try OTPSecret(
                base32: try c.requiredString("secret", maximum: 4096),
                minimumByteCount: CodeGenerator.minimumSecretByteCount)
            let algorithm = try OTPAlgorithm(parsing: try c.string("algorithm", maximum: 16) ?? "SHA1")
            let digits = Int(try c.integer("digits") ?? 6)
            let period = Int(try c.integer("period") ?? Int64(TOTP.defaultPeriod))
            let totp = try TOTP(secret: secret, algorithm: algorithm, digits: digits, period: period)
            let issuer = try c.string("issuer", maximum: 512).flatMap { $0.isEmpty ? nil : $0 }
            var account = try c.string("username", "userName", maximum: 512) ?? ""
            if account.isEmpty { account = title ?? issuer ?? "imported" }
            let key = try OTPKeyURI(generator: .totp(totp), issuer: issuer, account: account)
            return CodeGenerator(key: key, sites: sites)
        } catch let error as KeychainError {
            throw error
        } catch let error as OneTimeCodeError {
            throw KeychainError(.invalidItem, reason: "the TOTP is invalid (\(error.code))")
        } catch {
            throw KeychainError(.invalidItem, reason: "the TOTP is invalid")
        }
    }
}

extension Keychain {
    /// Imports a CXF document (``CXFImport``) into this vault as new items. Credentials already here are counted as
    /// duplicates and not added again. Call ``save()`` after.
    public func importCXF(_ json: [UInt8]) throws(KeychainError) -> CXFImportReport {
        var report = CXFImportReport()
        let candidates = try CXFImport.parse(json, report: &report)
        return try add(candidates, report: report)
    }

    /// Adds what an import read, skipping credentials already here (counted as duplicates).
    func add(_ candidates: [CXFImport.Candidate], report: CXFImportReport) throws(KeychainError) -> CXFImportReport {
        var report = report
        let now = clock.now
        var existing = items
        for candidate in candidates {
            if existing.contains(where: { Self.sameCredential($0.content, candidate.content) }) {
                report.duplicates += 1
                continue
            }
            do throws(KeychainError) {
                let created = min(candidate.created ?? now, now)
                let item = try KeychainItem(
                    content: candidate.content, notes: candidate.notes, created: created,
                    modified: max(candidate.modified ?? created, created))
                try put(item)
                existing.append(item)
                report.imported[item.kind, default: 0] += 1
            } catch {
                report.failures.append("\(candidate.content.kind.rawValue): \(error.reason)")
            }
        }
        return report
    }

    static func sameCredential(_ a: ItemContent, _ b: ItemContent) -> Bool {
        switch (a, b) {
        case (.passkey(let x), .passkey(let y)): x.rpId == y.rpId && x.credentialId == y.credentialId
        case (.password(let x), .password(let y)):
            Set(x.sites) == Set(y.sites) && x.username == y.username && x.password == y.password
        case (.codeGenerator(let x), .codeGenerator(let y)):
            x.key.secret == y.key.secret && x.key.account == y.key.account
        default: false
        }
    }
}
