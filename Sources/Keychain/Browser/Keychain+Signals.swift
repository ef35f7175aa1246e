/// What the Signal API (W3C WebAuthn Level 3 §5.1.10) does to the keychain's passkeys. The RP ID has been checked
/// against the calling page's origin before any of these is called (``NativeHost``).
extension Keychain {
    /// `signalCurrentUserDetails`: the passkeys for `rpId` and this user handle take the relying party's current
    /// user name and display name. Returns how many changed (``save()`` writes them).
    public func applyCurrentUserDetails(
        rpId: String, userHandle: [UInt8], name: String, displayName: String
    ) throws(KeychainError) -> Int {
        var changed = 0
        for item in items {
            guard case .passkey(var passkey) = item.content, passkey.rpId == rpId, passkey.userHandle == userHandle
            else { continue }
            let newName = String(name.prefix(256))
            let newDisplayName = String(displayName.prefix(256))
            guard passkey.userName != newName || passkey.displayName != newDisplayName else { continue }
            passkey.userName = newName
            passkey.displayName = newDisplayName
            var updated = item
            updated.content = .passkey(passkey)
            try update(updated)
            changed += 1
        }
        return changed
    }

    /// `signalAllAcceptedCredentials` (§5.1.10.2): of this user's passkeys for `rpId`, those not in `accepted` are
    /// hidden (kept, not offered for sign-in) and those in it shown again; other users' and other sites' passkeys
    /// stay as they are. Returns how many changed (``save()`` writes them).
    public func applyAllAcceptedCredentials(
        rpId: String, userHandle: [UInt8], accepted: Set<[UInt8]>
    ) throws(KeychainError) -> Int {
        var changed = 0
        for item in items {
            guard case .passkey(var passkey) = item.content, passkey.rpId == rpId, passkey.userHandle == userHandle
            else { continue }
            let hidden = !accepted.contains(passkey.credentialId)
            guard passkey.hidden != hidden else { continue }
            passkey.hidden = hidden
            var updated = item
            updated.content = .passkey(passkey)
            try update(updated)
            changed += 1
        }
        return changed
    }

    /// The passkey for `rpId` with this credential ID, if the keychain holds one (`signalUnknownCredential`
    /// names it; the extension asks the person before ``removePasskey(rpId:credentialId:)``).
    public func passkey(rpId: String, credentialId: [UInt8]) -> (KeychainItem, Passkey)? {
        for item in items {
            if case .passkey(let p) = item.content, p.rpId == rpId, p.credentialId == credentialId {
                return (item, p)
            }
        }
        return nil
    }

    /// Removes the passkey for `rpId` with this credential ID; `noCredential` when there is none for that RP ID.
    public func removePasskey(rpId: String, credentialId: [UInt8]) throws(KeychainError) {
        guard let (item, _) = passkey(rpId: rpId, credentialId: credentialId) else {
            throw KeychainError(.noCredential, reason: "no passkey with that ID for this site")
        }
        try delete(item.id)
    }
}
