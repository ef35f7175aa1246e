import Foundation
import Synchronization

/// Sign-in ceremony starts per client address, counted in this node's memory (with sealed sign-in challenges the
/// options step writes nothing, so it has no database row to count in). The budget is `ceremoniesPerAddress` per
/// `window` per node: behind a load balancer that spreads one address over N nodes, that address may start up to N
/// times as many. What it bounds is the work of options requests (the username-first account read); nothing is
/// stored per start. Every guessable secret keeps its shared, database-backed limit (`RateLimiter`).
///
/// The same per-node count bounds guesses of the metrics token (`MetricsEndpoint`): every request that sends a token
/// takes one from its address's budget and a correct one gives it back, so a scraper never runs out and a guesser
/// gets the window's budget; the count stays in memory so that `/metrics` answers while the database does not.
///
/// Memory is bounded: windows that ended are dropped when the table passes `capacity` addresses, and if it is still
/// full then (more addresses active in one window than that), the table is cleared: a client with that many
/// addresses gets a fresh budget for each of them anyway.
package final class NodeCeremonyBudget: Sendable {
    private struct Window {
        var start: Date
        var count: Int
    }

    private let limit: Int
    private let window: TimeInterval
    private let capacity: Int
    private let windows = Mutex<[String: Window]>([:])

    package init(limit: Int, window: TimeInterval, capacity: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.capacity = capacity
    }

    /// Counts one start for `address`; 429 with `Retry-After` (nothing counted) once its window's budget is spent.
    package func start(address: String, now: Date) throws(APIError) {
        let retryAfter: TimeInterval? = windows.withLock { windows in
            if var current = windows[address], now.timeIntervalSince(current.start) < window {
                guard current.count < limit else {
                    return current.start.addingTimeInterval(window).timeIntervalSince(now)
                }
                current.count += 1
                windows[address] = current
                return nil
            }
            if windows.count >= capacity {
                windows = windows.filter { now.timeIntervalSince($0.value.start) < window }
                if windows.count >= capacity { windows.removeAll(keepingCapacity: true) }
            }
            windows[address] = Window(start: now, count: 1)
            return nil
        }
        if let retryAfter { throw APIError.tooManyAttempts(retryAfter: max(1, Int(retryAfter.rounded(.up)))) }
    }

    /// Gives back one start counted for `address` in its current window (a correct metrics token).
    package func giveBack(address: String, now: Date) {
        windows.withLock { windows in
            guard var current = windows[address], now.timeIntervalSince(current.start) < window, current.count > 0
            else { return }
            current.count -= 1
            windows[address] = current
        }
    }
}
