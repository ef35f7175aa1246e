import Foundation

/// Entry points for the libFuzzer targets in `FuzzTesting/` (and the corpus replay in the tests): each feeds
/// bytes to the keychain's parsers of outside data and checks what they accept for consistency. Not API: the SPI
/// keeps the parsers themselves internal.
@_spi(Fuzzing) public enum KeychainFuzzing {
    private static let key = try! VaultKey(epoch: 1, bytes: Array(repeating: 7, count: 32))
    private static let device = DeviceKey(privateKey: try! .init(rawRepresentation: Array(repeating: 9, count: 32)))

    /// The vault file, its body, sessions, sealed records, HPKE messages and item plaintexts.
    public static func vaultFile(_ bytes: [UInt8]) {
        if let file = try? VaultFile(bytes: bytes) {
            precondition(file.body.count >= 16 && file.salt.count == 32)
            _ = try? file.open(fileKey: key.key)
        }
        if let session = try? Session(bytes: bytes) {
            precondition(session.bytes == bytes, "a session must re-encode to itself")
        }
        if let record = try? SealedRecord(bytes: bytes) {
            precondition(record.bytes.count >= SealedRecord.overhead)
            _ = try? record.open(with: key)
            _ = try? Manifest.open(record, key: key, vaultId: record.vaultId, version: record.version)
        }
        if let box = try? HPKEBox(bytes: bytes) {
            _ = try? box.open(with: device.privateKey, info: [], expecting: box.mode)
        }
        if let state = try? VaultBody.decode(bytes) {
            let again = try? VaultBody.decode(VaultBody.encode(state))
            precondition(
                again.map(VaultBody.encode) == VaultBody.encode(state), "a vault body must survive its encoding")
        }
        if let item = try? ItemCoding.decode(bytes) {
            precondition((try? ItemCoding.decode(ItemCoding.encode(item))) == item, "an item must survive its encoding")
        }
        _ = try? TombstoneCoding.decode(bytes, id: ItemID(unchecked: Array(repeating: 0, count: 16)))
    }

    /// The sync protocol's JSON messages: whatever parses must survive its own encoding.
    public static func syncMessage(_ bytes: [UInt8]) {
        if let m = try? PullResponse(json: bytes) { precondition((try? PullResponse(json: m.json)) == m) }
        if let m = try? PushRequest(json: bytes) { precondition((try? PushRequest(json: m.json)) == m) }
        if let m = try? PushResponse(json: bytes) { precondition((try? PushResponse(json: m.json)) == m) }
        if let m = try? JoinRequest(json: bytes) { precondition((try? JoinRequest(json: m.json)) == m) }
        if let m = try? JoinApproval(json: bytes) { precondition((try? JoinApproval(json: m.json)) == m) }
        if let m = try? ShareMessage(json: bytes) { precondition((try? ShareMessage(json: m.json)) == m) }
        _ = try? StoredServerState.decode(bytes)
        // `sesame serve`'s answers and the enrollment file (`HTTPSyncTransport.swift`).
        _ = try? WireJSON.decode(JoinRequestList.self, bytes)
        _ = try? WireJSON.decode(ShareList.self, bytes)
        if let e = try? WireJSON.decode(SyncEnrollment.self, bytes) { precondition(e.token.utf8.count == 64) }
        _ = HTTPSyncTransport.errorCode(Data(bytes))
    }

    private static let sampleList = try! PublicSuffixList(bytes: Array("com\nco.uk\n*.ck\n!www.ck\ngithub.io\n".utf8))

    /// The public suffix list parser, Punycode, origins and the RP ID check.
    public static func publicSuffixList(_ bytes: [UInt8]) {
        if let list = try? PublicSuffixList(bytes: bytes) {
            for host in ["example.com", "a.b.example.co.uk", "www.ck", "x.y.ck", "localhost", "com"] {
                let suffix = list.publicSuffix(of: host)
                precondition(host == suffix || host.hasSuffix("." + suffix))
                if let registrable = list.registrableDomain(of: host) {
                    precondition(host == registrable || host.hasSuffix("." + registrable))
                }
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return }
        for label in text.split(separator: "\n").prefix(4) { _ = Punycode.asciiLabel(String(label)) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let origin = try? WebOrigin(lines[0]) {
            precondition((try? WebOrigin(origin.description)) == origin, "an origin must survive its serialisation")
            let requested = lines.count > 1 ? lines[1] : nil
            if let rpId = try? origin.relyingPartyId(requested, suffixes: sampleList) {
                precondition(rpId == origin.host || origin.host.hasSuffix("." + rpId))
                precondition(!sampleList.isPublicSuffix(rpId) || origin.isLoopback)
            }
        }
    }

    /// The DEFLATE inflater of CXF's `largeBlob`: what inflates stays within the limit and inflates the same again
    /// from stored blocks.
    public static func deflate(_ bytes: [UInt8]) {
        guard let out = try? Deflate.inflate(bytes, maximumOutput: Passkey.largeBlobMaximum) else { return }
        precondition(out.count <= Passkey.largeBlobMaximum)
        precondition((try? Deflate.inflate(Deflate.stored(out), maximumOutput: out.count)) == out)
    }

    /// The Bitwarden JSON importer: whatever it accepts must be a valid item.
    public static func bitwarden(_ bytes: [UInt8]) {
        var report = CXFImportReport()
        guard let candidates = try? BitwardenImport.parse(bytes, report: &report) else { return }
        for candidate in candidates {
            if let item = try? KeychainItem(
                content: candidate.content, notes: candidate.notes, created: Date(timeIntervalSince1970: 0))
            {
                precondition((try? ItemCoding.decode(ItemCoding.encode(item))) == item)
            }
        }
    }

    /// The KeePassXC CSV importer: whatever it accepts must be a valid item.
    public static func keePassXC(_ bytes: [UInt8]) {
        var report = CXFImportReport()
        guard let candidates = try? KeePassXCImport.parse(bytes, report: &report) else { return }
        for candidate in candidates {
            if let item = try? KeychainItem(
                content: candidate.content, notes: candidate.notes, created: Date(timeIntervalSince1970: 0))
            {
                precondition((try? ItemCoding.decode(ItemCoding.encode(item))) == item)
            }
        }
    }

    /// The CXF importer: whatever it accepts must be a valid item.
    public static func cxf(_ bytes: [UInt8]) {
        var report = CXFImportReport()
        guard let candidates = try? CXFImport.parse(bytes, report: &report) else { return }
        for candidate in candidates {
            if let item = try? KeychainItem(
                content: candidate.content, notes: candidate.notes, created: Date(timeIntervalSince1970: 0))
            {
                precondition((try? ItemCoding.decode(ItemCoding.encode(item))) == item)
            }
        }
    }

    private static let hostSuffixes = try! PublicSuffixList(bytes: Array("com\nco.uk\n".utf8))

    /// The native host's input: native messaging frames and the requests in them. Whatever frames split into
    /// must re-frame to the same bytes; every request gets a reply that is JSON under the size limit, with the
    /// request's id when it had one. The vault is never reached (the opener refuses), so replies are the checks'.
    public static func nativeMessage(_ bytes: [UInt8]) {
        if let frames = try? NativeMessageFrame.split(bytes) {
            let again = frames.flatMap { (try? NativeMessageFrame.encode($0)) ?? [] }
            precondition(again == bytes, "frames must re-encode to their input")
        }
        // The window's session requests reach a session that refuses (and a lock that does nothing).
        let session = NativeHost.SessionControl(
            status: { () throws(KeychainError) -> SessionStatus? in nil },
            unlock: { (_: String) throws(KeychainError) -> SessionStatus in
                throw KeychainError(.wrongPassphrase, reason: "fuzzing")
            },
            lock: { () throws(KeychainError) -> Void in })
        let host = NativeHost(suffixes: hostSuffixes, session: session) { () throws(KeychainError) -> Keychain in
            throw KeychainError(.locked, reason: "fuzzing")
        }
        let reply = host.reply(to: bytes)
        precondition(!reply.isEmpty && reply.count <= NativeMessageFrame.maximumLength)
        precondition((try? JSONSerialization.jsonObject(with: Data(reply))) != nil, "a reply must be JSON")
        if let request = try? NativeHostRequest(json: bytes) {
            precondition(NativeHost.bestEffortId(reply) == request.id, "a reply echoes the request's id")
        }
    }
}
