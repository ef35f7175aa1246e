import CBOR
import Foundation
import OneTimeCode

/// The plaintext of an item inside its sealed record: a canonical CBOR map with text keys.
///
/// ```cddl
/// item = {
///   "v": 1,                            ; plaintext format version
///   "id": bstr .size 16,               ; the item ID (also bound in the record's associated data)
///   "kind": "passkey" / "password" / "code",
///   "created": int, "modified": int,   ; Unix time in milliseconds
///   ? "notes": tstr,
///   ; kind "passkey":
///   "rp": tstr, "cred": bstr, "user": bstr, "name": tstr, "display": tstr,
///   "alg": -7 / -8, "key": bstr .size 32, ? "used": int,
///   ? "hidden": true,                  ; left out of the site's signalAllAcceptedCredentials (absent: shown)
///   ? "hmac": [bstr .size 32, bstr .size 32],   ; the credential's HMAC secrets, with UV (used by prf) and
///                                               ; without UV; absent on passkeys made before prf was answered
///   ? "blob": bstr .size (0..2048),    ; what the site stored with the largeBlob extension
///   ; kind "password":
///   "sites": [+ tstr], "username": tstr, "password": tstr,
///   ; kind "code":
///   "uri": tstr,                       ; the otpauth:// link (carries secret, algorithm, digits, period/counter,
///                                      ; issuer, account)
///   "sites": [* tstr],
/// }
/// ```
/// Decoding is strict: an unknown member, a wrong type or a value the item rules refuse is `malformedRecord`.
enum ItemCoding {
    static let version: Int64 = 1

    static func encode(_ item: KeychainItem) -> [UInt8] {
        CBOREncoder.encode(cbor(item))
    }

    static func cbor(_ item: KeychainItem) -> CBOR {
        var entries: [CBORMapEntry] = [
            CBORMapEntry("v", CBOR(version)),
            CBORMapEntry("id", .byteString(item.id.bytes)),
            CBORMapEntry("kind", .textString(item.kind.rawValue)),
            CBORMapEntry("created", CBOR(ItemTime.milliseconds(item.created))),
            CBORMapEntry("modified", CBOR(ItemTime.milliseconds(item.modified))),
        ]
        if let notes = item.notes { entries.append(CBORMapEntry("notes", .textString(notes))) }
        switch item.content {
        case .passkey(let p):
            entries += [
                CBORMapEntry("rp", .textString(p.rpId)), CBORMapEntry("cred", .byteString(p.credentialId)),
                CBORMapEntry("user", .byteString(p.userHandle)), CBORMapEntry("name", .textString(p.userName)),
                CBORMapEntry("display", .textString(p.displayName)),
                CBORMapEntry("alg", CBOR(Int64(p.algorithm.rawValue))), CBORMapEntry("key", .byteString(p.privateKey)),
            ]
            if let used = p.lastUsed { entries.append(CBORMapEntry("used", CBOR(ItemTime.milliseconds(used)))) }
            if p.hidden { entries.append(CBORMapEntry("hidden", .boolean(true))) }
            if let h = p.hmacSecret {
                entries.append(CBORMapEntry("hmac", .array([.byteString(h.withUV), .byteString(h.withoutUV)])))
            }
            if let blob = p.largeBlob { entries.append(CBORMapEntry("blob", .byteString(blob))) }
        case .password(let p):
            entries += [
                CBORMapEntry("sites", .array(p.sites.map { .textString($0) })),
                CBORMapEntry("username", .textString(p.username)), CBORMapEntry("password", .textString(p.password)),
            ]
        case .codeGenerator(let c):
            entries += [
                CBORMapEntry("uri", .textString(c.key.otpauthURI)),
                CBORMapEntry("sites", .array(c.sites.map { .textString($0) })),
            ]
        }
        return .map(entries)
    }

    static func decode(_ bytes: [UInt8]) throws(KeychainError) -> KeychainItem {
        let fields = try CBORFields(decoding: bytes, code: .malformedRecord, what: "item")
        return try decode(fields)
    }

    static func decode(_ item: CBOR) throws(KeychainError) -> KeychainItem {
        try decode(CBORFields(item, code: .malformedRecord, what: "item"))
    }

    private static func decode(_ f: CBORFields) throws(KeychainError) -> KeychainItem {
        var f = f
        guard try f.int("v") == version else {
            throw KeychainError(.unsupportedFormat, reason: "item plaintext format is not \(version)")
        }
        guard let id = ItemID(bytes: try f.bytes("id", count: 16...16)) else {
            throw KeychainError(.malformedRecord, reason: "item id")
        }
        let kindName = try f.text("kind", maximum: 16)
        let created = try f.time("created")
        let modified = try f.time("modified")
        let notes = try f.optionalText("notes", maximum: ItemLimits.notesBytes)
        let content: ItemContent
        switch ItemKind(rawValue: kindName) {
        case .passkey:
            guard let algorithm = PasskeyAlgorithm(rawValue: Int(try f.int("alg"))) else {
                throw KeychainError(.malformedRecord, reason: "passkey algorithm is not ES256 or EdDSA")
            }
            let lastUsed = try f.optionalTime("used")
            // Only `true` is written (a shown passkey has no member), so `false` would not re-encode to itself.
            let hidden = try f.optionalBool("hidden")
            guard hidden != false else {
                throw KeychainError(.malformedRecord, reason: "passkey 'hidden' is present but false")
            }
            var hmacSecret: Passkey.HMACSecret?
            if let hmac = f.optional("hmac") {
                guard case .array(let keys) = hmac, keys.count == 2,
                    let withUV = keys[0].bytes, withUV.count == Passkey.HMACSecret.length,
                    let withoutUV = keys[1].bytes, withoutUV.count == Passkey.HMACSecret.length
                else { throw KeychainError(.malformedRecord, reason: "passkey 'hmac' is not two 32-byte strings") }
                hmacSecret = Passkey.HMACSecret(withUV: withUV, withoutUV: withoutUV)
            }
            content = .passkey(
                Passkey(
                    rpId: try f.text("rp", maximum: 253), credentialId: try f.bytes("cred", count: 1...1023),
                    userHandle: try f.bytes("user", count: 1...64),
                    userName: try f.text("name", maximum: ItemLimits.nameBytes),
                    displayName: try f.text("display", maximum: ItemLimits.nameBytes), algorithm: algorithm,
                    privateKey: try f.bytes("key", count: 32...32), lastUsed: lastUsed, hidden: hidden == true,
                    hmacSecret: hmacSecret,
                    largeBlob: try f.optionalBytes("blob", count: 0...Passkey.largeBlobMaximum)))
        case .password:
            content = .password(
                Password(
                    sites: try f.texts("sites", maximum: ItemLimits.sites),
                    username: try f.text("username", maximum: ItemLimits.nameBytes),
                    password: try f.text("password", maximum: ItemLimits.passwordBytes)))
        case .code:
            let uri = try f.text("uri", maximum: OTPKeyURI.maximumLength)
            let key: OTPKeyURI
            do {
                key = try CodeGenerator.parseKey(uri)
            } catch {
                throw KeychainError(.malformedRecord, reason: "code generator link (\(error.code))")
            }
            content = .codeGenerator(CodeGenerator(key: key, sites: try f.texts("sites", maximum: ItemLimits.sites)))
        case nil:
            throw KeychainError(.malformedRecord, reason: "unknown item kind")
        }
        try f.finish()
        do {
            return try KeychainItem(id: id, content: content, notes: notes, created: created, modified: modified)
        } catch {
            throw KeychainError(.malformedRecord, reason: "item fails validation (\(error.reason))")
        }
    }
}
