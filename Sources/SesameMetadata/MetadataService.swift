import Foundation
import Logging
import Synchronization
import WebAuthn
import X509
import SesameCore

/// The FIDO metadata in force: the newest BLOB `sesame metadata import` stored, verified again when loaded (against
/// the roots and at the time it was imported with) and indexed. Every node polls the store's newest number at most
/// once a minute, so an import reaches running servers without a restart. A BLOB that no longer verifies is
/// logged and the previous index kept.
package final class MetadataService: Sendable {
    private struct State {
        var number: Int?
        var index: MetadataIndex?
        var checkedAt: Date?
    }

    private let state = Mutex(State())
    private let store: any MetadataStore
    private let clock: ServerClock
    private let logger: Logger
    package static let pollInterval: TimeInterval = 60

    package init(store: any MetadataStore, clock: ServerClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// The index in force, reloaded first when the poll interval has passed and the store holds a newer BLOB.
    package func current() async -> MetadataIndex? {
        let now = clock.now()
        let due = state.withLock { state in
            guard let checked = state.checkedAt, now.timeIntervalSince(checked) < Self.pollInterval else {
                state.checkedAt = now
                return true
            }
            return false
        }
        if due { await reloadIfNewer() }
        return state.withLock { $0.index }
    }

    package func reloadIfNewer() async {
        do {
            let newest = try await store.latestMetadataNumber()
            guard newest != state.withLock({ $0.number }), let blob = try await store.latestMetadataBLOB() else {
                return
            }
            let index = try await Self.index(blob)
            state.withLock {
                $0.number = blob.number
                $0.index = index
            }
            logger.info("metadata loaded", metadata: ["number": .stringConvertible(blob.number)])
        } catch {
            logger.error("metadata not loaded", metadata: ["error": .string(String(describing: error))])
        }
    }

    /// Verifies a stored BLOB again and indexes it.
    package static func index(_ blob: StoredMetadataBLOB) async throws -> MetadataIndex {
        let roots = try AttestationTrust.certificates(fromPEM: blob.rootsPEM)
        let verified = try await MetadataBLOB.verify(
            blob.jwt, roots: roots, time: blob.verifiedAt, enforceNextUpdate: false)
        return try MetadataIndex(verified)
    }
}
