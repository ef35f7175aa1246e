import Foundation

extension Keychain {
    /// The items, oldest first.
    public var items: [KeychainItem] { state.vault?.items ?? [] }

    /// Items whose ID starts with `query` (at least 4 characters), or whose site names, user name, issuer or
    /// account contain it (case-insensitive). An empty query matches everything.
    public func find(_ query: String, kind: ItemKind? = nil) -> [KeychainItem] {
        let candidates = items.filter { kind == nil || $0.kind == kind }
        let q = query.lowercased()
        guard !q.isEmpty else { return candidates }
        if q.count >= 4 {
            let byId = candidates.filter { $0.id.text.hasPrefix(q) }
            if !byId.isEmpty { return byId }
        }
        return candidates.filter { item in
            item.sites.contains { $0.lowercased().contains(q) } || item.searchText.contains(q)
        }
    }

    /// Exactly one item matching `query`.
    public func item(matching query: String, kind: ItemKind? = nil) throws(KeychainError) -> KeychainItem {
        let found = find(query, kind: kind)
        guard let first = found.first else { throw KeychainError(.itemNotFound, reason: "no item matches") }
        guard found.count == 1 else {
            throw KeychainError(.ambiguousItem, reason: "\(found.count) items match; give more of the ID")
        }
        return first
    }

    public func item(id: ItemID) -> KeychainItem? { state.vault?.entries[id]?.current }

    /// Adds a new item made now.
    @discardableResult
    public func add(_ content: ItemContent, notes: String? = nil) throws(KeychainError) -> KeychainItem {
        let item = try KeychainItem(content: content, notes: notes, created: clock.now)
        try put(item)
        return item
    }

    /// Replaces an item's content or notes; its modification time becomes now.
    public func update(_ item: KeychainItem) throws(KeychainError) {
        guard self.item(id: item.id) != nil else { throw KeychainError(.itemNotFound, reason: "no such item") }
        var changed = item
        changed.modified = ItemTime.truncate(max(clock.now, item.modified))
        try changed.validate()
        try put(changed)
    }

    /// Puts back an item deleted from this vault, under its own ID (the toolbar window's undo): a local change like
    /// any other, so it syncs, and a synced deletion not yet pushed is withdrawn. Refused while an item with that ID
    /// is present.
    public func restore(_ item: KeychainItem) throws(KeychainError) {
        guard self.item(id: item.id) == nil else {
            throw KeychainError(.invalidItem, reason: "an item with that ID is still in the vault")
        }
        var restored = item
        restored.modified = ItemTime.truncate(max(clock.now, item.modified))
        try put(restored)
    }

    /// Stores `item` as a local change.
    func put(_ item: KeychainItem) throws(KeychainError) {
        try item.validate()
        try updateMembership { (vault) throws(KeychainError) in
            var entry = vault.entries[item.id] ?? ItemEntry()
            entry.pending = .put(item)
            vault.entries[item.id] = entry
        }
    }

    /// Deletes an item. One that was never synced simply disappears; a synced one leaves a tombstone so other
    /// devices learn of the deletion.
    public func delete(_ id: ItemID) throws(KeychainError) {
        let now = ItemTime.truncate(clock.now)
        try updateMembership { (vault) throws(KeychainError) in
            guard var entry = vault.entries[id], entry.current != nil else {
                throw KeychainError(.itemNotFound, reason: "no such item")
            }
            if entry.synced == nil {
                vault.entries[id] = nil
            } else {
                entry.pending = .delete(now)
                vault.entries[id] = entry
            }
        }
    }
}

extension KeychainItem {
    /// Lower-cased user-visible names (not secrets) for searching.
    var searchText: String {
        switch content {
        case .passkey(let p): (p.rpId + " " + p.userName + " " + p.displayName).lowercased()
        case .password(let p): (p.sites.joined(separator: " ") + " " + p.username).lowercased()
        case .codeGenerator(let c):
            ((c.key.issuer ?? "") + " " + c.key.account + " " + c.sites.joined(separator: " ")).lowercased()
        }
    }
}
