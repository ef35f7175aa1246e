import Foundation
import Hummingbird
import SesameCore

/// The FIDO metadata BLOB in force, as the Overview shows it.
package struct MetadataFigures: ResponseEncodable, Sendable, Equatable {
    package let number: Int
    /// `nextUpdate` as the BLOB publishes it (`YYYY-MM-DD`).
    package let nextUpdate: String
    package let entries: Int
    /// When `sesame metadata import` stored it.
    package let importedAt: Date

    package init(number: Int, nextUpdate: String, entries: Int, importedAt: Date) {
        self.number = number
        self.nextUpdate = nextUpdate
        self.entries = entries
        self.importedAt = importedAt
    }
}

/// One of the identity provider's signing keys, as the Overview shows it (never the key).
package struct SigningKeyFigures: Sendable, Equatable {
    package let kid: String
    package let algorithm: String
    package let createdAt: Date
    package let retiredAt: Date?

    package init(kid: String, algorithm: String, createdAt: Date, retiredAt: Date?) {
        self.kid = kid
        self.algorithm = algorithm
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// What the Overview reads from features the console does not import, handed over by the composition root: the
/// metadata in force (`SesameMetadata`), the signing keys (`SesameIdentityProvider`) and which audit kinds are
/// sign-ins (every part's `sign_in.*` kinds and the recoveries that sign a person in).
package struct OverviewSources: Sendable {
    package var metadata: @Sendable () async throws -> MetadataFigures?
    package var signingKeys: @Sendable () async throws -> [SigningKeyFigures]
    package var signInKinds: [String]

    package init(
        metadata: @escaping @Sendable () async throws -> MetadataFigures? = { nil },
        signingKeys: @escaping @Sendable () async throws -> [SigningKeyFigures] = { [] }, signInKinds: [String] = []
    ) {
        self.metadata = metadata
        self.signingKeys = signingKeys
        self.signInKinds = signInKinds
    }
}

/// `GET /api/admin/overview` (scope `overview`): the figures the console's first page shows. Counts come from the
/// store at each call: accounts, today's sign-ins (since midnight UTC) by method and the failed ones (from the audit
/// log's index by kind and time), the outbox, the metadata in force, the signing keys' ages, this node's version
/// and the nodes seen in the last minute (`NodeHeartbeats`).
package struct OverviewRoutes: Sendable {
    package let sesame: ServerCore
    package let store: any OverviewStore & NodeHeartbeatStore & OutboxStore
    package let sources: OverviewSources

    package init(
        sesame: ServerCore, store: any OverviewStore & NodeHeartbeatStore & OutboxStore, sources: OverviewSources
    ) {
        self.sesame = sesame
        self.store = store
        self.sources = sources
    }

    package static let scope = AdminScope("overview")

    package struct Accounts: Codable, Sendable, Equatable {
        package let total: Int
        package let disabled: Int
    }

    package struct MethodCount: Codable, Sendable, Equatable {
        /// The audit kind's method: `passkey`, `password`, `second_factor`, or the kind itself for a recovery.
        package let method: String
        package let kind: String
        package let count: Int
    }

    package struct SignIns: Codable, Sendable, Equatable {
        /// Midnight UTC of today.
        package let since: Date
        /// Successful sign-ins by method (every sign-in kind listed, zero or not).
        package let byMethod: [MethodCount]
        /// Sign-ins refused or failed today (a wrong passkey, password or code; a disabled account).
        package let failed: Int
    }

    package struct Outbox: Codable, Sendable, Equatable {
        /// Mails neither sent nor given up.
        package let queued: Int
        /// Of those, the ones that have failed at least once and wait to be tried again.
        package let failing: Int
        package let oldest: Date?
    }

    package struct SigningKey: Codable, Sendable, Equatable {
        package let kid: String
        package let algorithm: String
        package let createdAt: Date
        package let ageDays: Int
        package let retiredAt: Date?
    }

    package struct Node: Codable, Sendable, Equatable {
        package let id: String
        package let version: String
        package let startedAt: Date
        package let lastSeenAt: Date
    }

    package struct Metadata: Codable, Sendable, Equatable {
        package let number: Int
        package let nextUpdate: String
        package let entries: Int
        package let importedAt: Date
        package let ageDays: Int
    }

    package struct OverviewBody: ResponseEncodable, Sendable, Equatable {
        package let generatedAt: Date
        package let version: String
        package let accounts: Accounts
        package let signIns: SignIns
        package let outbox: Outbox
        /// nil when no BLOB was imported (`sesame metadata import`).
        package let metadata: Metadata?
        package let signingKeys: [SigningKey]
        /// The nodes whose heartbeat is under a minute old, the longest running first.
        package let nodes: [Node]
    }

    static func days(_ from: Date, _ to: Date) -> Int { max(0, Int(to.timeIntervalSince(from) / 86_400)) }

    /// Midnight UTC of `now`'s day.
    package static func startOfDay(_ now: Date) -> Date {
        Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
    }

    static func method(_ kind: String) -> String {
        kind.hasPrefix("sign_in.") ? String(kind.dropFirst("sign_in.".count)) : kind
    }

    /// The figures now.
    package func overview() async throws -> OverviewBody {
        let now = sesame.now
        let since = Self.startOfDay(now)
        let accounts = try await store.accountCounts()
        let counts = try await store.auditCounts(kinds: sources.signInKinds, since: since)
        let byMethod = sources.signInKinds.map { kind in
            MethodCount(
                method: Self.method(kind), kind: kind,
                count: counts.filter { $0.kind == kind && $0.outcome == AuditOutcome.success.rawValue }.map(\.count)
                    .reduce(0, +))
        }
        let failed = counts.filter {
            $0.outcome == AuditOutcome.failure.rawValue || $0.outcome == AuditOutcome.refused.rawValue
        }.map(\.count).reduce(0, +)
        let outbox = try await store.outboxState(now: now)
        let failing = try await store.failingMails()
        let metadata = try await sources.metadata().map {
            Metadata(
                number: $0.number, nextUpdate: $0.nextUpdate, entries: $0.entries, importedAt: $0.importedAt,
                ageDays: Self.days($0.importedAt, now))
        }
        let keys = try await sources.signingKeys().map {
            SigningKey(
                kid: $0.kid, algorithm: $0.algorithm, createdAt: $0.createdAt, ageDays: Self.days($0.createdAt, now),
                retiredAt: $0.retiredAt)
        }
        let nodes = try await store.nodes(seenSince: now.addingTimeInterval(-NodeHeartbeats.recent)).map {
            Node(id: $0.id, version: $0.version, startedAt: $0.startedAt, lastSeenAt: $0.lastSeenAt)
        }
        return OverviewBody(
            generatedAt: now, version: SesameVersion.description,
            accounts: Accounts(total: accounts.total, disabled: accounts.disabled),
            signIns: SignIns(since: since, byMethod: byMethod, failed: failed),
            outbox: Outbox(queued: outbox.depth, failing: failing, oldest: outbox.oldest), metadata: metadata,
            signingKeys: keys, nodes: nodes)
    }

    /// Registers `GET /api/admin/overview` on the admin API's group.
    package func register(admin: RouterGroup<AdminRequestContext>) {
        admin.get("overview") { _, context in
            try context.admin.require(Self.scope)
            return try await overview()
        }
    }
}
