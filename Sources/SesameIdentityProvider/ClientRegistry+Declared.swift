import Foundation
import SesameCore

extension ClientRegistry {
    /// Brings the store in line with the declared clients; returns the ids created and the ids updated.
    package func declare(_ declared: [DeclaredClient], now: Date) async throws -> (created: [String], updated: [String])
    {
        var created: [String] = []
        var updated: [String] = []
        for declaration in declared {
            let wanted = try declaration.client(createdAt: now)
            if var existing = try await store.client(id: declaration.id) {
                let createdAt = existing.createdAt
                existing.createdAt = now
                guard existing != wanted else { continue }
                var replacement = wanted
                replacement.createdAt = createdAt
                try await store.updateClient(replacement)
                updated.append(declaration.id)
            } else {
                try await store.createClient(wanted)
                created.append(declaration.id)
            }
        }
        return (created, updated)
    }
}
