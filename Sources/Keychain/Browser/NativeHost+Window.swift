import Foundation
import OneTimeCode
import Synchronization
import WebAuthn

/// The toolbar window's requests (Extensions/browser/popup.js): the session, the item list and search, an item's
/// page and a generator's code. The service worker sends these only for the extension's own window.
///
///     window-result = { "unlocked": bool, ? "expires": uint, ? "userVerified": bool }   ; status, unlock, lock
///                   / { ? "site": tstr, "items": [* summary], "more": bool }          ; items
///                   / { "item": detail }                                              ; item
///                   / { "code": tstr, ? "secondsLeft": uint, ? "period": uint }       ; itemCode
///                   / { "item": detail }                                              ; updateItem
///                   / { "deleted": tstr, "undoSeconds": uint }                        ; deleteItem
///                   / { "item": summary }                                             ; undoDelete
///                   / { "document": cxf, "exported": counts, "skipped": [* tstr] }    ; exportCXF
///                   / { "imported": counts, "duplicates": uint,                       ; importCXF, importBitwarden,
///                                                                                     ; importKeePassXC
///                       "skippedTypes": { * tstr => uint }, "failures": [* tstr] }
///                   / { "configured": bool, "version": uint, "pendingChanges": uint,   ; syncStatus
///                       ? "lastSynced": uint,                                         ; Unix ms; absent: never
///                       "devices": [* { "deviceId": tstr, "name": tstr, "fingerprint": tstr, "added": uint,
///                                       "thisDevice": bool }] }
///                   / { "version": uint, "received": uint, "sent": uint,              ; syncNow
///                       "conflictCopies": uint, "unknownServerDevices": uint }
///                   / { "name": tstr, "fingerprint": tstr, "version": uint }          ; approveDevice
///                   / { "removed": tstr, ? "version": uint }                          ; removeDevice
///                   / { "waiting": [* { "joinRequest": tstr, "codeStart": tstr,        ; waitingDevices
///                                       "fingerprint": tstr }] }
///                   / { "refused": tstr }                                             ; refuseDevice
///                   / { "password": tstr, "bits": float, "list": tstr,                ; generatePassword
///                       "listSize": uint }
///                   / { "item": detail }                                              ; addPassword, addCode,
///                                                                                     ; addCodeQR
///     counts = { "passkey": uint, "password": uint, "code": uint }
///     summary = { "itemId": tstr, "kind": "passkey" / "password" / "code", "title": tstr, "username": tstr,
///                 "sites": [* tstr], "forSite": bool, "created": uint }              ; times in Unix ms
///     detail  = summary + { "modified": uint, ? "notes": tstr,
///                 ? "password": tstr,                                                 ; password
///                 ? "displayName": tstr, ? "lastUsed": uint,                          ; passkey
///                 ? "issuer": tstr, ? "codeType": "totp" / "hotp", ? "period": uint,  ; code
///                 "passkeys": [* { "itemId": tstr, "userName": tstr, "displayName": tstr, "created": uint }] }
///
/// `items` lists the site's items first (`forSite`: its passkeys, passwords and generators, by the rules the
/// page's requests use), then the others; with a `query`, only items whose title, sites, user names or notes
/// contain it (case-insensitive). `detail.passkeys` are the passkeys for the item's sites. No list carries a
/// secret; `item` gives a password's password (the window shows it on request and copies it).
///
/// `updateItem` changes what the window's edit form shows: a password's user name, password and notes, a
/// passkey's user name and display name and notes, a generator's notes, through ``Keychain/update(_:)`` as
/// `sesame keychain edit` does (so it syncs, and the item rules refuse what they refuse there). `deleteItem`
/// deletes as `sesame keychain delete` does and keeps the item in this process's memory for
/// ``RecentlyDeleted/undoSeconds``; `undoDelete` puts it back under its own ID (``Keychain/restore(_:)``).
///
/// `exportCXF` and `importCXF` are `sesame keychain export --cxf` and `import --cxf` for the window: the export
/// needs the person verified (a passphrase typed within the verification window), as the CLI's does, and holds
/// every secret in clear; both are bounded by the native messaging limit of 1 MiB per message.
extension NativeHost {
    /// Where the vault syncs (the sync folder or the enrolled server), for `syncNow` and `approveDevice`.
    public struct SyncControl: Sendable {
        public let transport: @Sendable () throws(KeychainError) -> any SyncTransport
        public init(transport: @escaping @Sendable () throws(KeychainError) -> any SyncTransport) {
            self.transport = transport
        }
    }

    /// ``reply(to:)``, and the window's requests that talk to the sync server (`syncNow`: pull, check, merge and
    /// push as `sesame keychain sync` does; `approveDevice`: let a joining device in with the code it shows, as
    /// `sesame keychain approve` does, then sync). `sesame keychain native-host` answers every message with this.
    public func replyWithSync(to message: [UInt8]) async -> [UInt8] {
        guard let request = try? NativeHostRequest(json: message),
            [.syncNow, .approveDevice, .removeDevice, .waitingDevices, .refuseDevice].contains(request.kind)
        else { return reply(to: message) }
        do throws(KeychainError) {
            return Self.success(id: request.id, try await answerSync(request))
        } catch {
            return Self.failure(id: request.id, error)
        }
    }

    func answerSync(_ request: NativeHostRequest) async throws(KeychainError) -> JSONValue {
        if request.kind == .removeDevice {
            // As `sesame keychain devices --remove`: out of the vault's device list at once, the vault key rotated
            // at the sync that follows (now, when there is a sync place; else the next one).
            let keychain = try open()
            let id = request.deviceId ?? []
            guard let device = keychain.devices.first(where: { $0.id == id }) else {
                throw KeychainError(.invalidDeviceRemoval, reason: "no such device in this vault")
            }
            try keychain.removeDevice(id)
            var result: [String: JSONValue] = ["removed": .string(device.name)]
            if let syncControl {
                let report = try await keychain.sync(with: try syncControl.transport())
                result["version"] = .int(Int(report.version))
            }
            try keychain.save()
            return .object(result)
        }
        guard let syncControl else {
            throw KeychainError(.syncNotConfigured, reason: "this host has no sync folder or server")
        }
        switch request.kind {
        case .waitingDevices:
            // The devices asking to join, each with the start of the code it shows (its key's part) to compare.
            let waiting = try await open().waitingJoins(transport: try syncControl.transport())
            return .object([
                "waiting": .array(
                    waiting.map { device in
                        .object([
                            "joinRequest": .string(Base64URL.encode(device.request)),
                            "codeStart": .string(device.codeStart),
                            "fingerprint": .string(device.fingerprint.description),
                        ])
                    })
            ])
        case .refuseDevice:
            // Refusing ends the join: the server drops the request and the device, at its next try, stops waiting.
            let joinRequest = request.joinRequest ?? []
            try await open().refuseJoin(request: joinRequest, transport: try syncControl.transport())
            return .object(["refused": .string(Base64URL.encode(joinRequest))])
        case .approveDevice:
            let code = try PairingCode(text: request.pairingCode ?? "")
            let keychain = try open()
            let transport = try syncControl.transport()
            let entry = try await keychain.approveJoin(
                code: code, name: request.deviceName.flatMap { $0.isEmpty ? nil : $0 } ?? "new device",
                transport: transport)
            let report = try await keychain.sync(with: transport)
            try keychain.save()
            return .object([
                "name": .string(entry.name), "fingerprint": .string(entry.fingerprint.description),
                "version": .int(Int(report.version)),
            ])
        default:
            let keychain = try open()
            let report = try await keychain.sync(with: try syncControl.transport())
            try keychain.save()
            return .object([
                "version": .int(Int(report.version)), "received": .int(report.received),
                "sent": .int(report.sent), "conflictCopies": .int(report.conflictCopies),
                "unknownServerDevices": .int(report.unknownServerDevices.count),
            ])
        }
    }

    /// How the host starts, ends and reads the unlock session for the window.
    public struct SessionControl: Sendable {
        public let status: @Sendable () throws(KeychainError) -> SessionStatus?
        public let unlock: @Sendable (String) throws(KeychainError) -> SessionStatus
        public let lock: @Sendable () throws(KeychainError) -> Void

        public init(
            status: @escaping @Sendable () throws(KeychainError) -> SessionStatus?,
            unlock: @escaping @Sendable (String) throws(KeychainError) -> SessionStatus,
            lock: @escaping @Sendable () throws(KeychainError) -> Void
        ) {
            self.status = status
            self.unlock = unlock
            self.lock = lock
        }

        /// The session of the vault in `directory`, as `sesame keychain unlock` and `lock` keep it: a session the
        /// window starts locks after `idle` seconds without use (`unlock --idle`; `native-host --idle`), with the
        /// default verification window (shortened to the idle time when that is shorter).
        public static func directory(
            _ directory: VaultDirectory, idle: UInt32 = 600, policy: KDFPolicy = .standard,
            clock: any KeychainClock = SystemKeychainClock()
        ) -> SessionControl {
            SessionControl(
                status: { () throws(KeychainError) -> SessionStatus? in
                    try Keychain.sessionStatus(directory, clock: clock)
                },
                unlock: { (passphrase: String) throws(KeychainError) -> SessionStatus in
                    try Keychain.unlock(directory, passphrase: passphrase, idle: idle, policy: policy, clock: clock)
                },
                lock: { () throws(KeychainError) -> Void in try Keychain.lock(directory) })
        }
    }

    /// The most items one `items` reply lists.
    static let maximumListedItems = 200

    func answerWindow(_ request: NativeHostRequest) throws(KeychainError) -> JSONValue {
        switch request.kind {
        case .status, .unlock, .lock:
            guard let session else {
                throw KeychainError(.locked, reason: "this host does not manage the unlock session")
            }
            switch request.kind {
            case .unlock: return Self.sessionJSON(try session.unlock(request.passphrase ?? ""))
            case .lock:
                try session.lock()
                return Self.sessionJSON(nil)
            default: return Self.sessionJSON(try session.status())
            }
        case .items:
            let keychain = try open()
            let origin = try request.origin.isEmpty ? nil : WebOrigin(request.origin)
            let needle = (request.query ?? "").lowercased().trimmingCharacters(in: .whitespaces)
            var site: [JSONValue] = []
            var others: [JSONValue] = []
            for item in keychain.items.sorted(by: { $0.title.lowercased() < $1.title.lowercased() }) {
                guard needle.isEmpty || Self.searchText(item).contains(needle) else { continue }
                let forSite = origin.map { serves(item, $0) } ?? false
                let summary = JSONValue.object(Self.summary(item, forSite: forSite))
                if forSite { site.append(summary) } else { others.append(summary) }
            }
            let all = site + others
            var result: [String: JSONValue] = [
                "items": .array(Array(all.prefix(Self.maximumListedItems))),
                "more": .bool(all.count > Self.maximumListedItems),
            ]
            if let origin { result["site"] = .string(origin.host) }
            return .object(result)
        case .item:
            let keychain = try open()
            guard let id = request.itemId, let item = keychain.item(id: id) else {
                throw KeychainError(.itemNotFound, reason: "no item with that ID")
            }
            return .object(["item": .object(Self.detail(of: item, in: keychain))])
        case .updateItem:
            let keychain = try open()
            guard let id = request.itemId, var item = keychain.item(id: id) else {
                throw KeychainError(.itemNotFound, reason: "no item with that ID")
            }
            if let notes = request.notes { item.notes = notes.isEmpty ? nil : notes }
            switch item.content {
            case .password(var p):
                if let username = request.username { p.username = username }
                if let password = request.password {
                    guard !password.isEmpty else { throw KeychainError(.invalidItem, reason: "an empty password") }
                    p.password = password
                }
                item.content = .password(p)
            case .passkey(var p):
                if let username = request.username { p.userName = username }
                if let displayName = request.displayName { p.displayName = displayName }
                item.content = .passkey(p)
            case .codeGenerator: break
            }
            try keychain.update(item)
            try keychain.save()
            return .object(["item": .object(Self.detail(of: keychain.item(id: id) ?? item, in: keychain))])
        case .addPassword:
            // As `sesame keychain add-password`: the site normalised to its host name, the item rules applied.
            guard let site = SiteName.normalise(request.site ?? "") else {
                throw KeychainError(.invalidItem, reason: "the site is not a host name or a URL with one")
            }
            let keychain = try open()
            let notes = request.notes.flatMap { $0.isEmpty ? nil : $0 }
            let item = try keychain.add(
                .password(Password(sites: [site], username: request.username ?? "", password: request.password ?? "")),
                notes: notes)
            try keychain.save()
            return .object(["item": .object(Self.detail(of: item, in: keychain))])
        case .addCode, .addCodeQR:
            // As `sesame keychain add-code LINK [--site SITE]` and `add-code --qr IMAGE`: the image is read by the
            // same ``QRReader`` (so the same qrDecoderUnavailable and qrUnreadable), the site defaults to the
            // issuer when it is a domain.
            var sites: [String] = []
            if let typed = request.site, !typed.trimmingCharacters(in: .whitespaces).isEmpty {
                guard let site = SiteName.normalise(typed) else {
                    throw KeychainError(.invalidItem, reason: "the site is not a host name or a URL with one")
                }
                sites = [site]
            }
            let keychain = try open()  // locked: refused before the image reaches zbarimg
            let link = try request.kind == .addCodeQR ? QRReader.read(image: request.image ?? []) : (request.uri ?? "")
            let generator = try CodeGenerator(
                parsing: link.trimmingCharacters(in: .whitespacesAndNewlines), sites: sites)
            let item = try keychain.add(
                .codeGenerator(generator), notes: request.notes.flatMap { $0.isEmpty ? nil : $0 })
            try keychain.save()
            return .object(["item": .object(Self.detail(of: item, in: keychain))])
        case .deleteItem:
            let keychain = try open()
            guard let id = request.itemId, let item = keychain.item(id: id) else {
                throw KeychainError(.itemNotFound, reason: "no item with that ID")
            }
            try keychain.delete(id)
            try keychain.save()
            recentlyDeleted.keep(item, now: Date())
            return .object(["deleted": .string(id.text), "undoSeconds": .int(RecentlyDeleted.undoSeconds)])
        case .undoDelete:
            guard let id = request.itemId, let item = recentlyDeleted.take(id, now: Date()) else {
                throw KeychainError(.itemNotFound, reason: "nothing to undo for that ID")
            }
            let keychain = try open()
            try keychain.restore(item)
            try keychain.save()
            return .object(["item": .object(Self.summary(keychain.item(id: id) ?? item, forSite: false))])
        case .syncStatus:
            let keychain = try open()
            guard let status = keychain.vaultStatus else {
                throw KeychainError(.joinInProgress, reason: "this directory holds a join in progress")
            }
            var result: [String: JSONValue] = [
                "configured": .bool(syncControl != nil), "version": .int(Int(status.syncedVersion)),
                "pendingChanges": .int(status.pendingChanges),
                "devices": .array(
                    status.devices.map { device in
                        .object([
                            "deviceId": .string(Base64URL.encode(device.id)), "name": .string(device.name),
                            "fingerprint": .string(device.fingerprint.description),
                            "added": .int(Int(ItemTime.milliseconds(device.added))),
                            "thisDevice": .bool(device.id == keychain.deviceId),
                        ])
                    }),
            ]
            if let lastSynced = status.lastSynced {
                result["lastSynced"] = .int(Int(ItemTime.milliseconds(lastSynced)))
            }
            return .object(result)
        case .syncNow, .approveDevice, .removeDevice, .waitingDevices, .refuseDevice:
            throw KeychainError(.syncNotConfigured, reason: "sync requests are answered by replyWithSync(to:)")
        case .exportCXF:
            let keychain = try open()
            guard keychain.userVerified else {
                throw KeychainError(
                    .userVerificationRequired, reason: "exporting needs the passphrase: unlock again in the window")
            }
            let (json, report) = keychain.exportCXF(exporterRpId: "localhost")
            return .object([
                "document": try BrowserJSON.decoded(json),
                "exported": Self.counts(report.exported), "skipped": .array(report.skipped.map { .string($0) }),
            ])
        case .importCXF, .importBitwarden, .importKeePassXC:
            // The same library calls as `sesame keychain import --cxf | --bitwarden | --keepassxc`: a file that does
            // not read is refused whole and the vault is not saved.
            let keychain = try open()
            let report =
                switch request.kind {
                case .importBitwarden: try keychain.importBitwarden(request.export ?? [])
                case .importKeePassXC: try keychain.importKeePassXC(request.export ?? [])
                default: try keychain.importCXF(request.document ?? [])
                }
            try keychain.save()
            return .object([
                "imported": Self.counts(report.imported), "duplicates": .int(report.duplicates),
                "skippedTypes": .object(report.skippedTypes.mapValues { .int($0) }),
                "failures": .array(report.failures.map { .string($0) }),
            ])
        case .generatePassword:
            // Words from the EFF long word list, drawn by the library as `add-password --generate --words N`
            // does; no vault is needed. (The window draws character passwords itself.)
            let generated = try PasswordGenerator.words(count: request.words ?? 0)
            return .object([
                "password": .string(generated.password), "bits": .number(String(generated.bits)),
                "list": .string(PasswordGenerator.wordListName), "listSize": .int(PasswordGenerator.wordListSize),
            ])
        case .itemCode:
            let keychain = try open()
            guard let id = request.itemId, let item = keychain.item(id: id) else {
                throw KeychainError(.itemNotFound, reason: "no item with that ID")
            }
            let code = try keychain.code(for: id)
            try keychain.save()  // an HOTP counter moved on
            var result: [String: JSONValue] = ["code": .string(code.code)]
            if let left = code.secondsLeft { result["secondsLeft"] = .int(left) }
            if case .codeGenerator(let c) = item.content, case .totp(let totp) = c.key.generator {
                result["period"] = .int(totp.period)
            }
            return .object(result)
        default:
            throw KeychainError(.malformedNativeMessage, reason: "not a request of the toolbar window")
        }
    }

    /// An item's page: its summary with the fields the window shows, and the passkeys for its sites.
    static func detail(of item: KeychainItem, in keychain: Keychain) -> [String: JSONValue] {
        var detail = Self.summary(item, forSite: false)
        detail.removeValue(forKey: "forSite")
        detail["modified"] = .int(Int(ItemTime.milliseconds(item.modified)))
        if let notes = item.notes { detail["notes"] = .string(notes) }
        switch item.content {
        case .password(let p): detail["password"] = .string(p.password)
        case .passkey(let p):
            detail["displayName"] = .string(p.displayName)
            if let used = p.lastUsed { detail["lastUsed"] = .int(Int(ItemTime.milliseconds(used))) }
        case .codeGenerator(let c):
            if let issuer = c.key.issuer { detail["issuer"] = .string(issuer) }
            switch c.key.generator {
            case .totp(let totp):
                detail["codeType"] = .string("totp")
                detail["period"] = .int(totp.period)
            case .hotp: detail["codeType"] = .string("hotp")
            }
        }
        let passkeys: [JSONValue] = keychain.items.compactMap { other in
            guard case .passkey(let p) = other.content,
                item.sites.contains(where: { $0.lowercased() == p.rpId || Self.isParent(p.rpId, of: $0) })
            else { return nil }
            return .object([
                "itemId": .string(other.id.text), "userName": .string(p.userName),
                "displayName": .string(p.displayName),
                "created": .int(Int(ItemTime.milliseconds(other.created))),
            ])
        }
        detail["passkeys"] = .array(passkeys)
        return detail
    }

    /// Whether `item` belongs to the page at `origin`: a password or generator whose site serves it, or a passkey
    /// whose RP ID does (its host, or a parent domain that is not a public suffix).
    func serves(_ item: KeychainItem, _ origin: WebOrigin) -> Bool {
        item.sites.contains { Keychain.site($0, serves: origin, suffixes: suffixes) }
    }

    /// Whether `parent` is a parent domain of `site` (a passkey for `example.com` serves `login.example.com`).
    static func isParent(_ parent: String, of site: String) -> Bool {
        site.lowercased().hasSuffix("." + parent)
    }

    static func counts(_ counts: [ItemKind: Int]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: ItemKind.allCases.map { ($0.rawValue, .int(counts[$0] ?? 0)) }))
    }

    static func sessionJSON(_ status: SessionStatus?) -> JSONValue {
        guard let status else { return .object(["unlocked": .bool(false)]) }
        return .object([
            "unlocked": .bool(true), "expires": .int(Int(ItemTime.milliseconds(status.expires))),
            "userVerified": .bool(status.userVerified),
        ])
    }

    static func username(_ item: KeychainItem) -> String {
        switch item.content {
        case .passkey(let p): p.userName
        case .password(let p): p.username
        case .codeGenerator(let c): c.key.account
        }
    }

    /// What a search looks in: title, sites, user names and notes, lower-cased. Never a secret.
    static func searchText(_ item: KeychainItem) -> String {
        var parts = [item.title, username(item)] + item.sites
        if case .passkey(let p) = item.content { parts.append(p.displayName) }
        if let notes = item.notes { parts.append(notes) }
        return parts.joined(separator: "\n").lowercased()
    }

    static func summary(_ item: KeychainItem, forSite: Bool) -> [String: JSONValue] {
        [
            "itemId": .string(item.id.text), "kind": .string(item.kind.rawValue), "title": .string(item.title),
            "username": .string(username(item)), "sites": .array(item.sites.map { .string($0) }),
            "forSite": .bool(forSite), "created": .int(Int(ItemTime.milliseconds(item.created))),
        ]
    }
}

/// Items the window deleted, for its "Undo": in this host process's memory only (never written), each for
/// ``undoSeconds``, at most ``capacity`` at a time.
final class RecentlyDeleted: Sendable {
    static let undoSeconds = 30
    static let capacity = 16
    private let items = Mutex<[(item: KeychainItem, at: Date)]>([])

    func keep(_ item: KeychainItem, now: Date) {
        items.withLock { list in
            list.removeAll { now.timeIntervalSince($0.at) > Double(Self.undoSeconds) || $0.item.id == item.id }
            list.append((item, now))
            if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
        }
    }

    func take(_ id: ItemID, now: Date) -> KeychainItem? {
        items.withLock { list in
            list.removeAll { now.timeIntervalSince($0.at) > Double(Self.undoSeconds) }
            guard let index = list.firstIndex(where: { $0.item.id == id }) else { return nil }
            return list.remove(at: index).item
        }
    }
}
