import Synchronization

/// Whether the database's storage refused the last write for lack of space (SQLite's `SQLITE_FULL`: the disk or
/// file system holding the database and its WAL is full). Set when a statement fails that way and cleared by the
/// next write that commits, so `/health` can say "degraded" while writes fail and reads still work, and says "ok"
/// again as soon as space returns, without a restart.
package final class WriteSpace: Sendable {
    private let full = Atomic<Bool>(false)

    package var isExhausted: Bool { full.load(ordering: .relaxed) }

    package func noteFull() { full.store(true, ordering: .relaxed) }

    package func noteCommitted() {
        if full.load(ordering: .relaxed) { full.store(false, ordering: .relaxed) }
    }
}
