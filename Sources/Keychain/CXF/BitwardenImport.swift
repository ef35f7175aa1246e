import Crypto
import Foundation
import OneTimeCode

/// Bitwarden's unencrypted JSON export (`bitwarden export --format json`, or the web vault's "File format: .json"),
/// read into the same candidates as a CXF import, and added the same way (``Keychain/importBitwarden(_:)``).
///
/// ```json
/// {"encrypted": false, "folders": [...],
///  "items": [{"type": 1, "name": "…", "notes": "…" | null, "creationDate": "ISO 8601", "revisionDate": "ISO 8601",
///             "login": {"username": "…" | null, "password": "…" | null, "uris": [{"uri": "…"}],
///                       "totp": "otpauth://…" | "BASE32" | null, "fido2Credentials": [...]}},
///            {"type": 2 (secure note) | 3 (card) | 4 (identity) | 5 (SSH key), ...}]}
/// ```
///
/// A login becomes a password for its web URIs' host names (its name's, when it is one and there is no URI) with its
/// notes, its `totp` a code generator for the same sites, and each of its `fido2Credentials` a passkey
/// (``passkey(_:path:)``). Other item types are counted in the report as not imported. The export is checked whole
/// before anything is added: one that is encrypted (`encryptedExport`), not JSON, or not this shape
/// (`invalidExport`), or that holds a passkey whose key is not ECDSA P-256 (`unsupportedPasskeyKey`) or does not
/// read (`malformedPasskeyKey`), adds nothing; a password or code that breaks the item rules is reported and
/// skipped.
enum BitwardenImport {
    static let maximumSize = 256 * 1024 * 1024
    static let maximumItems = 1_000_000

    static func parse(_ json: [UInt8], report: inout CXFImportReport) throws(KeychainError) -> [CXFImport.Candidate] {
        guard json.count <= maximumSize else { throw invalid("larger than \(maximumSize) bytes") }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw invalid("not JSON")
        }
        guard let top = root as? [String: Any] else { throw invalid("not a JSON object") }
        if let encrypted = top["encrypted"], !(encrypted is NSNull) {
            guard let flag = encrypted as? Bool else { throw invalid("'encrypted' is not true or false") }
            if flag {
                throw KeychainError(
                    .encryptedExport, reason: "an encrypted Bitwarden export: export it again as unencrypted JSON")
            }
        }
        guard let items = top["items"] as? [Any], items.count <= maximumItems else {
            throw invalid("no 'items' array of at most \(maximumItems) entries")
        }
        // The shape of every item first, so that a malformed file adds nothing.
        var logins: [(index: Int, item: [String: Any], login: [String: Any], passkeys: [(Passkey, Date?)])] = []
        for (index, raw) in items.enumerated() {
            guard let item = raw as? [String: Any], let kind = item["type"] as? Int
            else { throw invalid("items[\(index)] has no numeric 'type'") }
            for key in ["name", "notes", "creationDate", "revisionDate"] {
                guard item[key] == nil || item[key] is NSNull || item[key] is String else {
                    throw invalid("items[\(index)].\(key) is not a string")
                }
            }
            guard kind == 1 else {
                report.skippedTypes[typeName(kind), default: 0] += 1
                continue
            }
            guard let login = item["login"] as? [String: Any] else {
                throw invalid("items[\(index)] is a login without a 'login' object")
            }
            for key in ["username", "password", "totp"] {
                guard login[key] == nil || login[key] is NSNull || login[key] is String else {
                    throw invalid("items[\(index)].login.\(key) is not a string")
                }
            }
            if let uris = login["uris"], !(uris is NSNull) {
                guard let list = uris as? [Any], list.count <= 1000,
                    list.allSatisfy({
                        ($0 as? [String: Any]).map { $0["uri"] == nil || $0["uri"] is NSNull || $0["uri"] is String }
                            ?? false
                    })
                else { throw invalid("items[\(index)].login.uris is not a list of {\"uri\": …}") }
            }
            var passkeys: [(Passkey, Date?)] = []
            if let raw = login["fido2Credentials"], !(raw is NSNull) {
                guard let list = raw as? [Any], list.count <= 1000 else {
                    throw invalid("items[\(index)].login.fido2Credentials is not a list of at most 1000")
                }
                for (n, credential) in list.enumerated() {
                    passkeys.append(try passkey(credential, path: "items[\(index)].login.fido2Credentials[\(n)]"))
                }
            }
            logins.append((index, item, login, passkeys))
        }
        var out: [CXFImport.Candidate] = []
        for (index, item, login, passkeys) in logins {
            let string = { (key: String) -> String? in (item[key] as? String).flatMap { $0.isEmpty ? nil : $0 } }
            let name = string("name")
            var sites: [String] = []
            for entry in (login["uris"] as? [Any]) ?? [] {
                // Web addresses and bare host names; an app's URI (androidapp://, iosapp://) names no site.
                if let uri = (entry as? [String: Any])?["uri"] as? String, Self.isWeb(uri),
                    let site = SiteName.normalise(uri), !sites.contains(site)
                {
                    sites.append(site)
                }
            }
            if sites.isEmpty, let name, let site = SiteName.normalise(name) { sites = [site] }
            let created = string("creationDate").flatMap(date)
            let modified = string("revisionDate").flatMap(date)
            let notes = string("notes")
            let username = (login["username"] as? String) ?? ""
            if let password = login["password"] as? String, !password.isEmpty {
                if sites.isEmpty {
                    report.failures.append("items[\(index)] (login): a password without a site or URI")
                } else {
                    out.append(
                        CXFImport.Candidate(
                            content: .password(Password(sites: sites, username: username, password: password)),
                            notes: notes, created: created, modified: modified))
                }
            }
            if let totp = login["totp"] as? String, !totp.isEmpty {
                do throws(KeychainError) {
                    out.append(
                        CXFImport.Candidate(
                            content: .codeGenerator(
                                try codeGenerator(totp, account: username, issuer: name, sites: sites)),
                            notes: nil, created: created, modified: modified))
                } catch {
                    report.failures.append("items[\(index)] (totp): \(error.reason)")
                }
            }
            for (passkey, made) in passkeys {
                out.append(
                    CXFImport.Candidate(
                        content: .passkey(passkey), notes: nil, created: made ?? created, modified: made ?? created))
            }
        }
        return out
    }

    /// One of a login's `fido2Credentials`, as Bitwarden's clients write it (`Fido2CredentialExport` in
    /// bitwarden/clients `libs/common/src/models/export/fido2-credential.export.ts`; every member a string):
    ///
    /// ```json
    /// {"credentialId": "<GUID>" | "b64.<base64url>", "keyType": "public-key", "keyAlgorithm": "ECDSA",
    ///  "keyCurve": "P-256", "keyValue": "<base64url PKCS #8>", "rpId": "…", "userHandle": "<base64url>",
    ///  "userName": "…", "userDisplayName": "…", "rpName": "…", "counter": "0", "discoverable": "true",
    ///  "creationDate": "ISO 8601"}
    /// ```
    ///
    /// The credential ID stays byte-exact: a GUID is its 16 bytes in the order written (bitwarden/clients
    /// `guid-utils.ts`, `guidToRawFormat`), "b64." is followed by the bytes in base64url (`credential-id-utils.ts`,
    /// `parseCredentialId`). The sign counter is not carried (the keychain's is always 0, as for CXF imports);
    /// `discoverable` is not kept, as every keychain passkey is discoverable. A key stated or found to be other than
    /// ECDSA P-256 is `unsupportedPasskeyKey`; one that does not read is `malformedPasskeyKey`; any other member
    /// out of shape, or a passkey the keychain's item rules refuse, is `invalidExport`. Reasons name the path,
    /// never a value.
    static func passkey(_ raw: Any, path: String) throws(KeychainError) -> (Passkey, Date?) {
        guard let c = raw as? [String: Any] else { throw invalid("\(path) is not an object") }
        func string(_ key: String) throws(KeychainError) -> String? {
            guard let value = c[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw invalid("\(path).\(key) is not a string") }
            return text.isEmpty ? nil : text
        }
        func required(_ key: String) throws(KeychainError) -> String {
            guard let text = try string(key) else { throw invalid("\(path) has no \(key)") }
            return text
        }
        if let type = try string("keyType"), type != "public-key" {
            throw KeychainError(.unsupportedPasskeyKey, reason: "\(path): keyType is not public-key")
        }
        guard (try string("keyAlgorithm"))?.uppercased() == "ECDSA", (try string("keyCurve"))?.uppercased() == "P-256"
        else {
            throw KeychainError(
                .unsupportedPasskeyKey,
                reason: "\(path): the key is not ECDSA P-256 (ES256), the only passkeys Bitwarden exports")
        }
        let keyValue = try required("keyValue")
        let der: [UInt8]
        do {
            der = try CXFBase64.decode(keyValue, field: "keyValue")
        } catch {
            throw KeychainError(.malformedPasskeyKey, reason: "\(path).keyValue is not base64url")
        }
        guard let key = CredentialKey(pkcs8: der) else {
            if (try? P384.Signing.PrivateKey(derRepresentation: der)) != nil
                || (try? P521.Signing.PrivateKey(derRepresentation: der)) != nil
            {
                throw KeychainError(.unsupportedPasskeyKey, reason: "\(path).keyValue is not a P-256 key")
            }
            throw KeychainError(.malformedPasskeyKey, reason: "\(path).keyValue is not a PKCS #8 private key")
        }
        guard case .es256 = key else {
            throw KeychainError(.unsupportedPasskeyKey, reason: "\(path).keyValue is not a P-256 key")
        }
        let userHandle: [UInt8]
        do {
            userHandle = try CXFBase64.decode(try required("userHandle"), field: "userHandle")
        } catch {
            throw invalid("\(path).userHandle is not base64url")
        }
        let passkey = Passkey(
            rpId: try required("rpId").lowercased(), credentialId: try credentialID(try required("credentialId"), path),
            userHandle: userHandle, userName: try string("userName") ?? "",
            displayName: try string("userDisplayName") ?? "", algorithm: .es256, privateKey: key.rawPrivateKey)
        for key in ["rpName", "counter", "discoverable"] { _ = try string(key) }
        do {
            try passkey.validate()
        } catch {
            throw invalid("\(path): \(error.reason)")
        }
        return (passkey, try string("creationDate").flatMap(date))
    }

    /// Bitwarden's credential ID: "b64." and base64url, or a GUID (8-4-4-4-12 hexadecimal digits) for its 16 bytes.
    static func credentialID(_ text: String, _ path: String) throws(KeychainError) -> [UInt8] {
        if text.hasPrefix("b64.") {
            do {
                return try CXFBase64.decode(String(text.dropFirst(4)), field: "credentialId")
            } catch {
                throw invalid("\(path).credentialId is not base64url after b64.")
            }
        }
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.utf8.count) == [8, 4, 4, 4, 12] else {
            throw invalid("\(path).credentialId is neither a GUID nor b64. and base64url")
        }
        let hex = Array(groups.joined().utf8)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: hex.count, by: 2) {
            guard let high = nibble(hex[i]), let low = nibble(hex[i + 1]) else {
                throw invalid("\(path).credentialId is neither a GUID nor b64. and base64url")
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// Bitwarden's `totp`: an `otpauth://` link, or a bare Base32 secret (SHA-1, 6 digits, 30 s).
    static func codeGenerator(_ text: String, account: String, issuer: String?, sites: [String])
        throws(KeychainError) -> CodeGenerator
    {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased().hasPrefix("otpauth://") { return try CodeGenerator(parsing: trimmed, sites: sites) }
        do {
            let secret = try OTPSecret(
                base32: trimmed.replacingOccurrences(of: " ", with: ""),
                minimumByteCount: CodeGenerator.minimumSecretByteCount)
            let totp = try TOTP(secret: secret, algorithm: .sha1, digits: 6, period: TOTP.defaultPeriod)
            let key = try OTPKeyURI(
                generator: .totp(totp), issuer: issuer, account: account.isEmpty ? (issuer ?? "imported") : account)
            return CodeGenerator(key: key, sites: sites)
        } catch {
            throw KeychainError(.invalidItem, reason: "the TOTP secret is not a Base32 secret of 10 bytes or more")
        }
    }

    static func isWeb(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://") || !lower.contains("://")
    }

    static func typeName(_ kind: Int) -> String {
        switch kind {
        case 2: "secure note (Bitwarden)"
        case 3: "card (Bitwarden)"
        case 4: "identity (Bitwarden)"
        case 5: "SSH key (Bitwarden)"
        default: "item type \(kind) (Bitwarden)"
        }
    }

    static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    static func invalid(_ what: String) -> KeychainError {
        KeychainError(.invalidExport, reason: "not a Bitwarden JSON export this keychain reads: \(what)")
    }
}

extension Keychain {
    /// Imports an unencrypted Bitwarden JSON export (``BitwardenImport``) as new items, as ``importCXF(_:)`` does:
    /// credentials already here are counted, not added twice; a malformed export adds nothing. Call ``save()``.
    public func importBitwarden(_ json: [UInt8]) throws(KeychainError) -> CXFImportReport {
        var report = CXFImportReport()
        let candidates = try BitwardenImport.parse(json, report: &report)
        return try add(candidates, report: report)
    }
}
