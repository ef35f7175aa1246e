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
                try await store.updateClient(replacement, audit: nil)
                updated.append(declaration.id)
            } else {
                try await store.createClient(wanted, audit: nil)
                created.append(declaration.id)
            }
        }
        return (created, updated)
    }
}

extension DeclaredClient {
    /// The client as stored, its secret read from `secretFile`.
    package func client(createdAt: Date) throws(ConfigurationError) -> OAuthClient {
        var secretHash: [UInt8]?
        if let secretFile {
            guard let data = FileManager.default.contents(atPath: secretFile),
                let text = String(data: data, encoding: .utf8)
            else { throw ConfigurationError("clients[\(id)].secretFile: \(secretFile) cannot be read") }
            let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.count >= 32 else {
                throw ConfigurationError("clients[\(id)].secretFile: the secret must be at least 32 characters")
            }
            secretHash = Secrets.sha256(secret)
        }
        return OAuthClient(
            id: id, name: name, secretHash: secretHash, redirectURIs: redirectURIs,
            postLogoutRedirectURIs: postLogoutRedirectURIs ?? [], backchannelLogoutURI: backchannelLogoutURI,
            firstParty: firstParty ?? false, idTokenAlgorithm: idTokenAlg ?? "ES256",
            pairwiseSubject: subjectType == "pairwise", allowedGroups: allowedGroups,
            idTokenClaims: idTokenClaims ?? false, createdAt: createdAt)
    }
}
