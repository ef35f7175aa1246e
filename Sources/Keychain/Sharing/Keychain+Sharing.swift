import Foundation

/// An item another keychain offers to this one, before it is accepted.
public struct IncomingShare: Sendable, Hashable {
    public let id: [UInt8]
    public let sender: SharingKey
}

extension Keychain {
    /// This keychain's sharing key, to give to people who want to share with it.
    public var sharingKey: SharingKey? {
        state.vault.flatMap { try? SharingKey(publicKey: $0.sharingKey.publicKey) }
    }

    static func shareInfo(id: [UInt8], sender: [UInt8], recipient: [UInt8]) -> [UInt8] {
        Domain.bytes(Domain.share) + id + sender + recipient
    }

    /// Offers a copy of an item to another keychain. `confirmedFingerprint` is what the person read from the
    /// recipient (in person, or over a channel they trust) after being shown ``SharingKey/fingerprint``; a
    /// mismatch is `fingerprintMismatch` and nothing is sent. The item is sealed from this keychain's sharing key
    /// to the recipient's (HPKE auth mode), so the server can neither read it nor forge a share in this keychain's
    /// name. Call ``save()`` after (the sent share is recorded for listing and revoking).
    public func share(
        _ itemId: ItemID, to recipient: SharingKey, confirmedFingerprint: String, transport: any SyncTransport
    ) async throws(KeychainError) -> SentShare {
        guard recipient.fingerprint.matches(confirmedFingerprint) else {
            throw KeychainError(.fingerprintMismatch, reason: "the confirmed fingerprint is not the recipient key's")
        }
        let vault = try membership()
        guard let item = item(id: itemId) else { throw KeychainError(.itemNotFound, reason: "no such item") }
        let id = SecureRandom.bytes(16)
        let sender = vault.sharingKey
        let box = try HPKEBox.seal(
            ItemCoding.encode(item), to: try DeviceKey.publicKey(recipient.publicKey),
            info: Self.shareInfo(id: id, sender: sender.publicKey, recipient: recipient.publicKey),
            sender: sender.privateKey)
        try await transport.postShare(
            ShareMessage(id: id, sender: sender.publicKey, recipient: recipient.publicKey, blob: box.bytes))
        let sent = SentShare(
            id: id, recipientKey: recipient.publicKey, itemId: item.id, itemTitle: item.title,
            created: ItemTime.truncate(clock.now))
        try updateMembership { $0.sentShares.append(sent) }
        return sent
    }

    /// Offers waiting for this keychain that it has not accepted yet.
    public func incomingShares(transport: any SyncTransport) async throws(KeychainError) -> [IncomingShare] {
        let vault = try membership()
        var out: [IncomingShare] = []
        for message in try await transport.shares(recipient: vault.sharingKey.publicKey)
        where !vault.acceptedShares.contains(message.id) {
            out.append(IncomingShare(id: message.id, sender: try SharingKey(publicKey: message.sender)))
        }
        return out
    }

    /// Accepts an offer into this vault as a new item. With `expectedSender`, the sender key's fingerprint must
    /// match it (`fingerprintMismatch` otherwise). A share that does not open (not sealed to this keychain, or
    /// not by the key it names) is `shareInvalid`; one accepted before is `shareAlreadyAccepted`. Call ``save()``
    /// after.
    public func acceptShare(id: [UInt8], expectedSender: String? = nil, transport: any SyncTransport)
        async throws(KeychainError) -> KeychainItem
    {
        let vault = try membership()
        guard !vault.acceptedShares.contains(id) else {
            throw KeychainError(.shareAlreadyAccepted, reason: "this share was accepted before")
        }
        guard
            let message = try await transport.shares(recipient: vault.sharingKey.publicKey).first(where: { $0.id == id }
            )
        else { throw KeychainError(.itemNotFound, reason: "no such share for this keychain") }
        let sender = try SharingKey(publicKey: message.sender)
        if let expectedSender, !sender.fingerprint.matches(expectedSender) {
            throw KeychainError(.fingerprintMismatch, reason: "the share's sender is not the expected key")
        }
        let plaintext = try HPKEBox(bytes: message.blob).open(
            with: vault.sharingKey.privateKey,
            info: Self.shareInfo(id: message.id, sender: message.sender, recipient: vault.sharingKey.publicKey),
            expecting: .auth, sender: try DeviceKey.publicKey(message.sender), failure: .shareInvalid)
        let shared: KeychainItem
        do {
            shared = try ItemCoding.decode(plaintext)
        } catch {
            throw KeychainError(.shareInvalid, reason: "the shared item is malformed (\(error.code))")
        }
        var item = shared
        item.id = .random()
        item.created = ItemTime.truncate(clock.now)
        item.modified = item.created
        try put(item)
        try updateMembership { $0.acceptedShares.insert(id) }
        return item
    }

    /// What this keychain shared and has not revoked.
    public var sentShares: [SentShare] { state.vault?.sentShares ?? [] }

    /// Withdraws an offer: the server drops it, so it can no longer be accepted. A copy already accepted stays with
    /// its recipient (for a passkey, removing it at the site is what ends its use). Call ``save()`` after.
    public func revokeShare(id: [UInt8], transport: any SyncTransport) async throws(KeychainError) {
        let vault = try membership()
        guard vault.sentShares.contains(where: { $0.id == id }) else {
            throw KeychainError(.itemNotFound, reason: "no such sent share")
        }
        let stillOffered = try await transport.shares(sender: vault.sharingKey.publicKey).contains { $0.id == id }
        if stillOffered { try await transport.revokeShare(id: id, sender: vault.sharingKey.publicKey) }
        try updateMembership { $0.sentShares.removeAll { $0.id == id } }
    }
}
