import Foundation
import Logging
import ServiceLifecycle
import SesameBytes
import SesameCore

/// Each `sesame serve` says it is running: a row in `node_heartbeats` (its random id, version, start and the last
/// heartbeat) written at start and then every 15 s counted on `ticks`, with times from `clock` (tests advance both).
/// A row expires a day after its last heartbeat and the purge deletes it; the Overview lists the nodes seen in the
/// last minute.
package struct NodeHeartbeats: Service {
    package static let interval = Duration.seconds(15)
    /// How long a stopped node's row is kept.
    package static let keep: TimeInterval = 24 * 3600
    /// A node is listed as running when its last heartbeat is this recent.
    package static let recent: TimeInterval = 60

    package let store: any NodeHeartbeatStore
    package let clock: ServerClock
    package let ticks: any Clock<Duration>
    package let logger: Logger
    /// This process's id: 16 random hex characters, new at every start.
    package let id: String
    package let version: String
    package let startedAt: Date

    package init(
        store: any NodeHeartbeatStore, clock: ServerClock, ticks: any Clock<Duration>, logger: Logger,
        version: String = SesameVersion.description
    ) {
        self.store = store
        self.clock = clock
        self.ticks = ticks
        self.logger = logger
        self.id = Hex.encode(SecureRandom.bytes(8))
        self.version = version
        self.startedAt = clock.now()
    }

    /// Writes this node's heartbeat now.
    package func beat() async throws {
        try await store.beat(
            NodeRecord(id: id, version: version, startedAt: startedAt, lastSeenAt: clock.now()), keep: Self.keep)
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                do {
                    try await beat()
                } catch {
                    logger.warning(
                        "the node's heartbeat could not be written",
                        metadata: ["error_type": .string(String(describing: type(of: error)))])
                }
                try await ticks.sleep(for: Self.interval)
            }
        }
    }
}
