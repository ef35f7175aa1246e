/// A setting whose value a feature declares in its own target: the key names the value in `ServerConfiguration`
/// and gives its default once (the settings row prints it from here, so the two cannot differ).
///
/// ```swift
/// extension ServerConfiguration {
///     private enum KeychainQuotaKey: SettingKey { static let defaultValue = 256 }
///     public var keychainQuota: Int {
///         get { self[KeychainQuotaKey.self] }
///         set { self[KeychainQuotaKey.self] = newValue }
///     }
/// }
/// ```
public protocol SettingKey {
    associatedtype Value: Sendable & Equatable
    static var defaultValue: Value { get }
}

/// The values of the settings features declare (`SettingKey`), by key. A value equal to its default is not kept,
/// so a configuration with a default applied equals a fresh one.
package struct FeatureSettings: Sendable, Equatable {
    private var values: [ObjectIdentifier: any Sendable & Equatable] = [:]

    package init() {}

    package subscript<Key: SettingKey>(key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue == Key.defaultValue ? nil : newValue }
    }

    package static func == (left: FeatureSettings, right: FeatureSettings) -> Bool {
        left.values.count == right.values.count
            && left.values.allSatisfy { key, value in right.values[key].map { value.isEqual(to: $0) } ?? false }
    }
}

extension Equatable {
    fileprivate func isEqual(to other: any Equatable) -> Bool { (other as? Self) == self }
}

extension ServerConfiguration {
    /// The value of a setting a feature declares.
    package subscript<Key: SettingKey>(key: Key.Type) -> Key.Value {
        get { featureSettings[key] }
        set { featureSettings[key] = newValue }
    }
}
