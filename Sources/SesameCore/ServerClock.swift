import Foundation

/// Where the current time comes from. Read at each check; tests move it.
public struct ServerClock: Sendable {
    public var now: @Sendable () -> Date
    public init(now: @escaping @Sendable () -> Date) { self.now = now }
    public static let system = ServerClock { Date() }
}
