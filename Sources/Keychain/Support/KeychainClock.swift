import Foundation

/// Where the keychain reads the time: when a session expires, whether the vault was unlocked recently enough to
/// count as user verification, what a code generator shows. Read at the moment of the check, never stored in an
/// initialiser; tests pass a fixed or moving clock.
public protocol KeychainClock: Sendable {
    var now: Date { get }
}

/// The system clock.
public struct SystemKeychainClock: KeychainClock {
    public init() {}
    public var now: Date { Date() }
}

/// A clock that always answers the same instant.
public struct FixedKeychainClock: KeychainClock {
    public let now: Date
    public init(_ now: Date) { self.now = now }
}
