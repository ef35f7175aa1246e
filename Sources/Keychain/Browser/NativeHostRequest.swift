import Foundation
import WebAuthn

/// A request from the extension's service worker to `sesame keychain native-host`, one per native message.
///
///     request = {
///       "id": uint,                                  ; echoed in the reply, 0 to 2^53
///       "kind": "prepare" / "create" / "get" / "signal" / "remove" / "codes" / "code"
///               / "passwords" / "password" / "savePassword"
///               / "status" / "unlock" / "lock" / "items" / "item" / "itemCode"    ; the toolbar window's
///               / "updateItem" / "deleteItem" / "undoDelete" / "exportCXF" / "importCXF"
///               / "syncStatus" / "syncNow" / "approveDevice" / "addPassword" / "removeDevice" / "addCode"
///               / "waitingDevices" / "refuseDevice" / "generatePassword" / "importBitwarden" / "importKeePassXC"
///               / "addCodeQR",
///       "origin": tstr,                              ; the page's origin as the browser reported it (sender.origin);
///                                                    ; for the window's kinds, the active tab's origin or ""
///       ? "ceremony": "create" / "get",              ; prepare: which prompt the extension will show
///       ? "options": { * tstr => any },              ; prepare, create, get: WebAuthn options JSON (§5.1.8, §5.1.9)
///       ? "credentialId": tstr,                      ; get: base64url, the passkey the person picked; remove
///       ? "rpId": tstr,                              ; remove: the RP ID a signalUnknownCredential named
///       ? "itemId": tstr,                            ; code, password: the item the person picked
///       ? "username": tstr, ? "password": tstr,      ; savePassword: what the person typed and agreed to save
///       ? "signal": "signalUnknownCredential" / "signalAllAcceptedCredentials" / "signalCurrentUserDetails",
///       ? "payload": { * tstr => any },              ; signal: the page's argument (§5.1.10)
///       ? "passphrase": tstr,                        ; unlock: typed in the toolbar window, never stored
///       ? "query": tstr,                             ; items: search text (at most 256 bytes; absent: everything)
///       ? "notes": tstr, ? "displayName": tstr,      ; updateItem: the new values ("username" and "password"
///                                                    ; too); absent members stay as they are, "" clears notes
///       ? "document": { * tstr => any },             ; importCXF: a CXF document (header or account)
///       ? "pairingCode": tstr, ? "deviceName": tstr, ; approveDevice: the code the new device shows, and a name
///       ? "site": tstr,                              ; addPassword: the site ("username", "password", "notes" too)
///       ? "deviceId": tstr,                          ; removeDevice: base64url, as syncStatus lists it
///       ? "joinRequest": tstr,                       ; refuseDevice: base64url, as waitingDevices lists it
///       ? "words": uint,                             ; generatePassword: how many words (3 to 20)
///       ? "export": tstr,                            ; importBitwarden, importKeePassXC: the export file's text
///       ? "uri": tstr,                               ; addCode: the otpauth:// link (holds the secret; never logged),
///                                                    ; with "site" when given and "notes"
///       ? "image": tstr,                             ; addCodeQR: a PNG or JPEG of the QR code, base64 (RFC 4648
///                                                    ; §4, padded, as a data: URL holds it), at most 512 KiB
///                                                    ; decoded; with "site" and "notes" as addCode
///     }
///
/// `item`, `itemCode`, `updateItem`, `deleteItem` and `undoDelete` take `itemId`. The window's kinds are sent only for the extension's own window (the
/// service worker checks the sender); they reach every item, not one site's.
///
/// Members the kind does not use are ignored; a missing or mistyped one the kind needs is `malformedNativeMessage`.
public struct NativeHostRequest: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public enum Kind: String, Sendable, Codable {
        case prepare, create, get, signal, remove, codes, code, passwords, password, savePassword
        case status, unlock, lock, items, item, itemCode, updateItem, deleteItem, undoDelete, exportCXF, importCXF
        case syncStatus, syncNow, approveDevice, addPassword, removeDevice, addCode, waitingDevices, refuseDevice
        case generatePassword, importBitwarden, importKeePassXC, addCodeQR
    }
    public enum Ceremony: String, Sendable, Codable { case create, get }
    public enum Signal: String, Sendable, Codable {
        case unknownCredential = "signalUnknownCredential"
        case allAcceptedCredentials = "signalAllAcceptedCredentials"
        case currentUserDetails = "signalCurrentUserDetails"
    }

    public let id: Int
    public let kind: Kind
    public let origin: String
    public let ceremony: Ceremony?
    /// The options as JSON text, for ``Keychain/createPasskey(optionsJSON:origin:suffixes:preferredAlgorithm:)``
    /// and ``Keychain/signIn(optionsJSON:origin:suffixes:credentialId:userName:)``.
    public let options: [UInt8]?
    public let credentialId: [UInt8]?
    public let rpId: String?
    public let itemId: ItemID?
    public let username: String?
    public let password: String?
    public let signal: Signal?
    public let payload: SignalPayload?
    /// `unlock`: the passphrase as typed. Never logged or echoed (``description`` leaves it out).
    public let passphrase: String?
    /// `items`: the search text.
    public let query: String?
    /// `updateItem`: new notes ("" removes them) and a passkey's new display name.
    public let notes: String?
    public let displayName: String?
    /// `importCXF`: the document as JSON text, for ``Keychain/importCXF(_:)``.
    public let document: [UInt8]?
    /// `approveDevice`: the code the joining device shows (its text; checked by ``PairingCode``), never logged.
    public let pairingCode: String?
    /// `approveDevice`: the name the vault's device list will give it.
    public let deviceName: String?
    /// `addPassword`: the site the new password is for, as typed (a name or a URL).
    public let site: String?
    /// `removeDevice`: the device's ID.
    public let deviceId: [UInt8]?
    /// `addCode`: the otpauth:// or apple-otpauth:// link.
    public let uri: String?
    /// `addCodeQR`: the image's bytes (PNG or JPEG, at most ``QRReader/maximumImageBytes``), read by
    /// ``QRReader/read(image:)``. Never logged.
    public let image: [UInt8]?
    /// `refuseDevice`: the ID of the join request to refuse.
    public let joinRequest: [UInt8]?
    /// `generatePassword`: the number of words.
    public let words: Int?
    /// `importBitwarden`, `importKeePassXC`: the export file (Bitwarden's unencrypted JSON, KeePassXC's CSV) as
    /// UTF-8, for ``Keychain/importBitwarden(_:)`` and ``Keychain/importKeePassXC(_:)``.
    public let export: [UInt8]?

    /// The longest search text.
    static let maximumQueryBytes = 256

    /// The members of a Signal API call (WebAuthn L3 §5.1.10); which are required depends on the signal.
    public struct SignalPayload: Sendable, Equatable, Codable {
        public let rpId: String
        public let credentialId: String?
        public let userId: String?
        public let allAcceptedCredentialIds: [String]?
        public let name: String?
        public let displayName: String?
    }

    private struct Envelope: Decodable {
        let id: Int
        let kind: Kind
        let origin: String
        let ceremony: Ceremony?
        let options: JSONValue?
        let credentialId: String?
        let rpId: String?
        let itemId: String?
        let username: String?
        let password: String?
        let signal: Signal?
        let payload: SignalPayload?
        let passphrase: String?
        let query: String?
        let notes: String?
        let displayName: String?
        let document: JSONValue?
        let pairingCode: String?
        let deviceName: String?
        let site: String?
        let deviceId: String?
        let uri: String?
        let joinRequest: String?
        let words: Int?
        let export: String?
        let image: String?
    }

    /// The largest `id`: JavaScript numbers are exact up to 2^53.
    static let maximumId = 1 << 53

    public init(json: [UInt8]) throws(KeychainError) {
        guard json.count <= NativeMessageFrame.maximumLength else {
            throw KeychainError(
                .nativeMessageTooLarge, reason: "a request over \(NativeMessageFrame.maximumLength) bytes")
        }
        guard BrowserJSON.nestsWithinLimit(json) else {
            throw KeychainError(
                .malformedNativeMessage, reason: "the request nests deeper than \(BrowserJSON.maximumDepth)")
        }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(json))
        } catch let DecodingError.keyNotFound(key, _) {
            throw KeychainError(.malformedNativeMessage, reason: "the request lacks '\(key.stringValue)'")
        } catch {
            throw KeychainError(.malformedNativeMessage, reason: "the request is not a native host request")
        }
        guard (0...Self.maximumId).contains(envelope.id) else {
            throw KeychainError(.malformedNativeMessage, reason: "the request id is not 0 to 2^53")
        }
        id = envelope.id
        kind = envelope.kind
        origin = envelope.origin
        ceremony = envelope.ceremony
        switch kind {
        case .prepare, .create, .get:
            guard case .object = envelope.options, let options = envelope.options else {
                throw KeychainError(.malformedNativeMessage, reason: "a \(kind) request needs 'options' as an object")
            }
            self.options = try BrowserJSON.encoded(options)
            if kind == .prepare && envelope.ceremony == nil {
                throw KeychainError(.malformedNativeMessage, reason: "a prepare request needs 'ceremony'")
            }
        case .signal, .remove, .codes, .code, .passwords, .password, .savePassword, .status, .unlock, .lock, .items,
            .item, .itemCode, .updateItem, .deleteItem, .undoDelete, .exportCXF, .importCXF, .syncStatus, .syncNow,
            .approveDevice, .addPassword, .removeDevice, .addCode, .waitingDevices, .refuseDevice, .generatePassword,
            .importBitwarden, .importKeePassXC, .addCodeQR:
            self.options = nil
        }
        if kind == .approveDevice {
            guard let code = envelope.pairingCode, !code.isEmpty, code.utf8.count <= 1024 else {
                throw KeychainError(.malformedNativeMessage, reason: "an approveDevice request needs 'pairingCode'")
            }
            pairingCode = code
            deviceName = envelope.deviceName
        } else {
            pairingCode = nil
            deviceName = nil
        }
        if kind == .importCXF {
            guard case .object = envelope.document, let document = envelope.document else {
                throw KeychainError(
                    .malformedNativeMessage, reason: "an importCXF request needs 'document' as an object")
            }
            self.document = try BrowserJSON.encoded(document)
        } else {
            document = nil
        }
        if kind == .unlock {
            guard let passphrase = envelope.passphrase, !passphrase.isEmpty, passphrase.utf8.count <= 4096 else {
                throw KeychainError(.malformedNativeMessage, reason: "an unlock request needs 'passphrase'")
            }
            self.passphrase = passphrase
        } else {
            passphrase = nil
        }
        if kind == .items, let query = envelope.query {
            guard query.utf8.count <= Self.maximumQueryBytes else {
                throw KeychainError(
                    .malformedNativeMessage, reason: "'query' is longer than \(Self.maximumQueryBytes) bytes")
            }
            self.query = query
        } else {
            query = nil
        }
        if kind == .savePassword {
            guard let username = envelope.username, let password = envelope.password, !password.isEmpty else {
                throw KeychainError(
                    .malformedNativeMessage, reason: "a savePassword request needs 'username' and 'password'")
            }
            self.username = username
            self.password = password
        } else if kind == .addPassword {
            guard let username = envelope.username, let password = envelope.password, !password.isEmpty,
                envelope.site != nil
            else {
                throw KeychainError(
                    .malformedNativeMessage, reason: "an addPassword request needs 'site', 'username' and 'password'")
            }
            self.username = username
            self.password = password
        } else if kind == .updateItem {
            // Lengths and characters are the item rules', checked when the item is validated.
            username = envelope.username
            password = envelope.password
        } else {
            username = nil
            password = nil
        }
        notes = [.updateItem, .addPassword, .addCode, .addCodeQR].contains(kind) ? envelope.notes : nil
        site = [.addPassword, .addCode, .addCodeQR].contains(kind) ? envelope.site : nil
        if kind == .addCodeQR {
            // The length is checked before decoding: base64 is 4 characters for 3 bytes.
            guard let text = envelope.image, !text.isEmpty,
                text.utf8.count <= (QRReader.maximumImageBytes + 2) / 3 * 4,
                let bytes = Data(base64Encoded: text), bytes.count <= QRReader.maximumImageBytes
            else {
                throw KeychainError(
                    .malformedNativeMessage,
                    reason:
                        "an addCodeQR request needs 'image' as base64 of at most \(QRReader.maximumImageBytes) bytes")
            }
            image = Array(bytes)
        } else {
            image = nil
        }
        if kind == .addCode {
            guard let uri = envelope.uri, !uri.isEmpty, uri.utf8.count <= 4096 else {
                throw KeychainError(.malformedNativeMessage, reason: "an addCode request needs 'uri'")
            }
            self.uri = uri
        } else {
            uri = nil
        }
        if kind == .removeDevice {
            guard let text = envelope.deviceId, let id = try? Base64URL.decode(text), (1...64).contains(id.count) else {
                throw KeychainError(.malformedNativeMessage, reason: "a removeDevice request needs 'deviceId'")
            }
            deviceId = id
        } else {
            deviceId = nil
        }
        if kind == .refuseDevice {
            guard let text = envelope.joinRequest, let id = try? Base64URL.decode(text), id.count == 16 else {
                throw KeychainError(.malformedNativeMessage, reason: "a refuseDevice request needs 'joinRequest'")
            }
            joinRequest = id
        } else {
            joinRequest = nil
        }
        if kind == .generatePassword {
            guard let words = envelope.words else {
                throw KeychainError(.malformedNativeMessage, reason: "a generatePassword request needs 'words'")
            }
            self.words = words
        } else {
            words = nil
        }
        if kind == .importBitwarden || kind == .importKeePassXC {
            guard let text = envelope.export, !text.isEmpty else {
                throw KeychainError(.malformedNativeMessage, reason: "an \(kind) request needs 'export'")
            }
            export = Array(text.utf8)
        } else {
            export = nil
        }
        displayName = kind == .updateItem ? envelope.displayName : nil
        if [.code, .password, .item, .itemCode, .updateItem, .deleteItem, .undoDelete].contains(kind) {
            guard let text = envelope.itemId, let id = ItemID(text: text) else {
                throw KeychainError(.malformedNativeMessage, reason: "a \(kind) request needs 'itemId'")
            }
            itemId = id
        } else {
            itemId = nil
        }
        if kind == .remove && (envelope.rpId == nil || envelope.credentialId == nil) {
            throw KeychainError(.malformedNativeMessage, reason: "a remove request needs 'rpId' and 'credentialId'")
        }
        rpId = kind == .remove ? envelope.rpId : nil
        if kind == .get || kind == .remove, let text = envelope.credentialId {
            guard let bytes = try? Base64URL.decode(text), !bytes.isEmpty, bytes.count <= 1023 else {
                throw KeychainError(
                    .malformedNativeMessage, reason: "'credentialId' is not 1 to 1023 bytes of base64url")
            }
            credentialId = bytes
        } else {
            credentialId = nil
        }
        if kind == .signal {
            guard let signal = envelope.signal, let payload = envelope.payload else {
                throw KeychainError(.malformedNativeMessage, reason: "a signal request needs 'signal' and 'payload'")
            }
            self.signal = signal
            self.payload = payload
        } else {
            signal = nil
            payload = nil
        }
    }

    /// The kind and id only: a request may carry a passphrase or a password.
    public var description: String { "NativeHostRequest(\(id), \(kind))" }
    public var debugDescription: String { description }
}
