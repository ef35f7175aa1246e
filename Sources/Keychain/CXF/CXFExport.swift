import Foundation
import OneTimeCode
import WebAuthn

/// What an export wrote.
public struct CXFExportReport: Sendable, Hashable {
    public var exported: [ItemKind: Int] = [:]
    /// Items CXF 1.0 has no type for (HOTP counters), not written.
    public var skipped: [String] = []
}

/// Export to the FIDO Credential Exchange Format (CXF 1.0): one header document with one account.
///
/// ```json
/// {"version": {"major": 1, "minor": 0}, "exporterRpId": "<rp id>", "exporterDisplayName": "Sesame Keychain",
///  "timestamp": <unix seconds>,
///  "accounts": [{"id": "<b64url>", "username": "", "email": "", "collections": [], "items": [
///     {"id": "<item id, b64url>", "creationAt": s, "modifiedAt": s, "title": "...", "subtitle": "...",
///      "scope": {"urls": ["https://site"], "androidApps": []},
///      "credentials": [
///        {"type": "basic-auth", "username": {"fieldType": "string", "value": "…"},
///                               "password": {"fieldType": "concealed-string", "value": "…"}},
///        {"type": "passkey", "credentialId": "<b64url>", "rpId": "…", "username": "…", "userDisplayName": "…",
///                            "userHandle": "<b64url>", "key": "<b64url PKCS #8>",
///                            "fido2Extensions": {"hmacCredentials": {"algorithm": "hmac-sha256",
///                                "credWithUV": "<b64url>", "credWithoutUV": "<b64url>"},     ; prf's secrets
///                              "largeBlob": {"uncompressedSize": n, "data": "<b64url DEFLATE>"}}},
///        {"type": "totp", "secret": "<base32>", "period": 30, "digits": 6, "username": "…", "algorithm": "sha1",
///                         "issuer": "…"},
///        {"type": "note", "content": {"fieldType": "string", "value": "…"}}]}]}]}
/// ```
/// The file holds every secret in clear: the command line writes it with mode 0600 and says so.
enum CXFExport {
    static func document(items: [KeychainItem], exporterRpId: String, now: Date, report: inout CXFExportReport)
        -> [UInt8]
    {
        var out: [[String: Any]] = []
        for item in items {
            var credentials: [[String: Any]] = []
            var urls: [String] = []
            var title = ""
            var subtitle: String?
            switch item.content {
            case .password(let p):
                credentials.append([
                    "type": "basic-auth",
                    "username": ["fieldType": "string", "value": p.username],
                    "password": ["fieldType": "concealed-string", "value": p.password],
                ])
                urls = p.sites.map { "https://" + $0 }
                title = p.sites.first ?? ""
                subtitle = p.username
            case .passkey(let p):
                guard let key = try? CredentialKey(algorithm: p.algorithm, privateKey: p.privateKey),
                    let pkcs8 = key.pkcs8
                else { continue }
                var passkey: [String: Any] = [
                    "type": "passkey", "credentialId": Base64URL.encode(p.credentialId), "rpId": p.rpId,
                    "username": p.userName, "userDisplayName": p.displayName,
                    "userHandle": Base64URL.encode(p.userHandle), "key": Base64URL.encode(pkcs8),
                ]
                var extensions: [String: Any] = [:]
                if let h = p.hmacSecret {
                    extensions["hmacCredentials"] = [
                        "algorithm": "hmac-sha256", "credWithUV": Base64URL.encode(h.withUV),
                        "credWithoutUV": Base64URL.encode(h.withoutUV),
                    ]
                }
                if let blob = p.largeBlob {
                    // CXF 1.0 Fido2LargeBlob: DEFLATE data and its size once inflated; stored blocks, which every
                    // inflater reads.
                    extensions["largeBlob"] = [
                        "uncompressedSize": blob.count, "data": Base64URL.encode(Deflate.stored(blob)),
                    ]
                }
                if !extensions.isEmpty { passkey["fido2Extensions"] = extensions }
                credentials.append(passkey)
                urls = ["https://" + p.rpId]
                title = p.rpId
                subtitle = p.userName
            case .codeGenerator(let c):
                guard case .totp(let totp) = c.key.generator else {
                    report.skipped.append("\(item.id): HOTP has no CXF 1.0 type")
                    continue
                }
                var totpCredential: [String: Any] = [
                    "type": "totp", "secret": totp.secret.base32, "period": totp.period, "digits": totp.digits,
                    "username": c.key.account, "algorithm": totp.algorithm.rawValue.lowercased(),
                ]
                if let issuer = c.key.issuer { totpCredential["issuer"] = issuer }
                credentials.append(totpCredential)
                urls = c.sites.map { "https://" + $0 }
                title = c.key.issuer ?? c.sites.first ?? c.key.account
                subtitle = c.key.account
            }
            if let notes = item.notes {
                credentials.append(["type": "note", "content": ["fieldType": "string", "value": notes]])
            }
            var entry: [String: Any] = [
                "id": Base64URL.encode(item.id.bytes),
                "creationAt": Int64(item.created.timeIntervalSince1970),
                "modifiedAt": Int64(item.modified.timeIntervalSince1970),
                "title": title, "credentials": credentials,
                "scope": ["urls": urls, "androidApps": [Any]()],
            ]
            if let subtitle { entry["subtitle"] = subtitle }
            out.append(entry)
            report.exported[item.kind, default: 0] += 1
        }
        let document: [String: Any] = [
            "version": ["major": 1, "minor": 0], "exporterRpId": exporterRpId,
            "exporterDisplayName": KeychainProvider.name, "timestamp": Int64(now.timeIntervalSince1970),
            "accounts": [
                [
                    "id": Base64URL.encode(SecureRandom.bytes(16)), "username": "", "email": "",
                    "collections": [Any](), "items": out,
                ] as [String: Any]
            ],
        ]
        return
            (try? Array(
                JSONSerialization.data(
                    withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))) ?? []
    }
}

extension Keychain {
    /// Every item as a CXF document (``CXFExport``); HOTP generators are listed in the report as not exported.
    public func exportCXF(exporterRpId: String = "localhost") -> (json: [UInt8], report: CXFExportReport) {
        var report = CXFExportReport()
        let json = CXFExport.document(items: items, exporterRpId: exporterRpId, now: clock.now, report: &report)
        return (json, report)
    }
}
