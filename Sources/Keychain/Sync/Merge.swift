import Foundation
import OneTimeCode

/// The merge rule for an item changed here and, concurrently, on another device (docs/keychain.md, "Merging").
///
/// Three-way, field by field, against the last content both devices agreed on (`base`):
/// - a field changed on one side only takes that side's value;
/// - a field changed on both sides to the same value takes it;
/// - sets (an item's sites) merge as sets: an addition on either side stays, a removal on either side goes;
/// - "last used" takes the later time, "created" the earlier, a code generator's HOTP counter the higher
///   (a counter never goes back);
/// - a field changed on both sides to different values is a conflict: the side with the later modification time
///   wins the field (the server's side on a tie), and the losing side's whole item is kept as a new item, a
///   conflict copy, so nothing typed on either device is lost.
///
/// Deletions are decided by the caller: an edit on one side beats a deletion on the other (the item stays, with
/// the edit); two deletions are one deletion.
enum Merge {
    struct Outcome {
        let merged: KeychainItem
        let conflictCopy: KeychainItem?
    }

    static let conflictNote = "Conflict copy: this version was changed on another device at the same time."

    static func merge(base: KeychainItem?, local: KeychainItem, remote: KeychainItem, now: Date) -> Outcome {
        var conflict = false
        func pick<T: Equatable>(_ b: T?, _ l: T, _ r: T) -> T? {
            if l == r { return l }
            if let b, l == b { return r }
            if let b, r == b { return l }
            conflict = true
            return nil
        }
        let localWins = local.modified > remote.modified
        func resolve<T: Equatable>(_ b: T?, _ l: T, _ r: T) -> T { pick(b, l, r) ?? (localWins ? l : r) }

        var content: ItemContent
        switch (base?.content, local.content, remote.content) {
        case (let b, .passkey(let l), .passkey(let r)):
            let bp: Passkey? = if case .passkey(let p)? = b { p } else { nil }
            var m = r
            let identity = resolve(bp.map(PasskeyIdentity.init), PasskeyIdentity(l), PasskeyIdentity(r))
            m.rpId = identity.rpId
            m.credentialId = identity.credentialId
            m.userHandle = identity.userHandle
            m.algorithm = identity.algorithm
            m.privateKey = identity.privateKey
            m.hmacSecret = identity.hmacSecret
            m.userName = resolve(bp?.userName, l.userName, r.userName)
            m.displayName = resolve(bp?.displayName, l.displayName, r.displayName)
            m.lastUsed = [l.lastUsed, r.lastUsed].compactMap { $0 }.max()
            m.hidden = resolve(bp?.hidden, l.hidden, r.hidden)
            m.largeBlob = resolve(bp?.largeBlob, l.largeBlob, r.largeBlob)
            content = .passkey(m)
        case (let b, .password(let l), .password(let r)):
            let bp: Password? = if case .password(let p)? = b { p } else { nil }
            content = .password(
                Password(
                    sites: mergeSets(bp?.sites, l.sites, r.sites),
                    username: resolve(bp?.username, l.username, r.username),
                    password: resolve(bp?.password, l.password, r.password)))
        case (let b, .codeGenerator(let l), .codeGenerator(let r)):
            let bc: CodeGenerator? = if case .codeGenerator(let c)? = b { c } else { nil }
            var key = resolve(bc.map { withoutCounter($0.key) }, withoutCounter(l.key), withoutCounter(r.key))
            if let counter = [counter(l.key), counter(r.key)].compactMap({ $0 }).max() {
                key = withCounter(key, counter)
            }
            content = .codeGenerator(CodeGenerator(key: key, sites: mergeSets(bc?.sites, l.sites, r.sites)))
        default:
            // Different kinds under one ID: keep the later whole, copy the other.
            conflict = true
            content = localWins ? local.content : remote.content
        }
        let notes = resolve(base?.notes, local.notes, remote.notes)

        var merged = remote
        merged.content = content
        merged.notes = notes
        merged.created = min(local.created, remote.created)
        merged.modified = max(local.modified, remote.modified)
        guard conflict else { return Outcome(merged: merged, conflictCopy: nil) }

        var copy = localWins ? remote : local
        copy.id = .random()
        copy.notes = [copy.notes, conflictNote].compactMap { $0 }.joined(separator: "\n\n")
        if copy.notes!.utf8.count > ItemLimits.notesBytes { copy.notes = conflictNote }
        copy.modified = ItemTime.truncate(now)
        return Outcome(merged: merged, conflictCopy: copy)
    }

    /// Additions on either side stay, removals on either side go; local order first.
    static func mergeSets(_ base: [String]?, _ local: [String], _ remote: [String]) -> [String] {
        let b = Set(base ?? [])
        let l = Set(local)
        let r = Set(remote)
        var out: [String] = []
        for s in local + remote where !out.contains(s) {
            let inBoth = l.contains(s) && r.contains(s)
            let added = !b.contains(s)
            if inBoth || added { out.append(s) }
        }
        return Array(out.prefix(ItemLimits.sites))
    }

    private struct PasskeyIdentity: Equatable {
        let rpId: String
        let credentialId: [UInt8]
        let userHandle: [UInt8]
        let algorithm: PasskeyAlgorithm
        let privateKey: [UInt8]
        /// Part of the credential: its `prf` outputs must not change under a site's encrypted data.
        let hmacSecret: Passkey.HMACSecret?
        init(_ p: Passkey) {
            rpId = p.rpId
            credentialId = p.credentialId
            userHandle = p.userHandle
            algorithm = p.algorithm
            privateKey = p.privateKey
            hmacSecret = p.hmacSecret
        }
    }

    static func counter(_ key: OTPKeyURI) -> UInt64? {
        if case .hotp(_, let c) = key.generator { return c }
        return nil
    }

    static func withCounter(_ key: OTPKeyURI, _ counter: UInt64) -> OTPKeyURI {
        guard case .hotp(let h, _) = key.generator else { return key }
        return (try? OTPKeyURI(generator: .hotp(h, counter: counter), issuer: key.issuer, account: key.account)) ?? key
    }

    static func withoutCounter(_ key: OTPKeyURI) -> OTPKeyURI { withCounter(key, 0) }
}
