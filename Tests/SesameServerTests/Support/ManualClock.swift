import Foundation
import Synchronization

/// A clock that moves only when a test calls `advance(by:)`, for the background services (the purge, SQLite
/// checkpoints): a test lets a minute pass at once and then waits for what the service did, instead of sleeping.
/// A sleeper is resumed when the clock reaches its deadline, and throws `CancellationError` when its task is
/// cancelled (graceful shutdown cancels the services' sleeps).
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
        /// Every sleep that has started, so a test can wait for a service's next turn to begin.
        var sleepsStarted = 0
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    var sleepsStarted: Int { state.withLock { $0.sleepsStarted } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { state in
                    state.sleepsStarted += 1
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on and wakes every sleeper whose deadline it reached.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (yielding, checking again every few milliseconds, at most `seconds`) until `condition` holds; returns
    /// whether it did. A condition, not a time, ends the wait: a slow machine only makes it take longer. The bound is
    /// only how long a failure takes to show: in the whole suite on two cores no test finishes for the first 80 to 90
    /// seconds (every thread of the pool is busy), and a 60 s bound failed tests whose service had not yet had a turn.
    static func waitUntil(seconds: Double = 300, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return try await condition()
    }
}
