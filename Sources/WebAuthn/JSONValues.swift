import Foundation

/// Binary data that travels in WebAuthn Level 3 JSON as a `Base64URLString`: unpadded base64url (RFC 4648 §5).
///
/// Decoding is strict: padding, the standard alphabet (`+`, `/`), whitespace and non-zero trailing bits are
/// refused with ``WebAuthnError/Code/invalidBase64URL`` naming the JSON member (never its value).
public struct Base64URLBytes: Sendable, Hashable, Codable, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            bytes = try Base64URL.decode(text)
        } catch {
            // The member's name is worked out only on failure: decoding is on every sign-in's path.
            throw WebAuthnError(
                .invalidBase64URL, detail: "\(Self.fieldName(decoder.codingPath)) is not unpadded base64url")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Base64URL.encode(bytes))
    }

    /// The base64url text.
    public var description: String { Base64URL.encode(bytes) }

    static func fieldName(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}

/// Declares a WebIDL `DOMString` enumeration as an open set of values, as Level 3 does on purpose
/// (§2.1.1 "Enumerations as DOMString types"): unknown values decode and round-trip instead of failing.
public protocol OpenStringEnumeration: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    init(rawValue: String)
}

extension OpenStringEnumeration {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    public var description: String { rawValue }
}

/// `enum AuthenticatorTransport { "usb", "nfc", "ble", "smart-card", "hybrid", "internal" }` (§5.8.4).
public struct AuthenticatorTransport: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let usb: Self = "usb"
    public static let nfc: Self = "nfc"
    public static let ble: Self = "ble"
    public static let smartCard: Self = "smart-card"
    public static let hybrid: Self = "hybrid"
    public static let `internal`: Self = "internal"
}

/// `enum UserVerificationRequirement { "required", "preferred", "discouraged" }` (§5.8.6).
public struct UserVerificationRequirement: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let required: Self = "required"
    public static let preferred: Self = "preferred"
    public static let discouraged: Self = "discouraged"
}

/// `enum ResidentKeyRequirement { "discouraged", "preferred", "required" }` (§5.4.6).
public struct ResidentKeyRequirement: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let discouraged: Self = "discouraged"
    public static let preferred: Self = "preferred"
    public static let required: Self = "required"
}

/// `enum AuthenticatorAttachment { "platform", "cross-platform" }` (§5.4.5).
public struct AuthenticatorAttachment: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let platform: Self = "platform"
    public static let crossPlatform: Self = "cross-platform"
}

/// `enum AttestationConveyancePreference { "none", "indirect", "direct", "enterprise" }` (§5.4.7).
public struct AttestationConveyancePreference: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let none: Self = "none"
    public static let indirect: Self = "indirect"
    public static let direct: Self = "direct"
    public static let enterprise: Self = "enterprise"
}

/// `enum PublicKeyCredentialHint { "security-key", "client-device", "hybrid" }` (§5.8.7).
public struct PublicKeyCredentialHint: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let securityKey: Self = "security-key"
    public static let clientDevice: Self = "client-device"
    public static let hybrid: Self = "hybrid"
}

/// `enum CredentialMediationRequirement { "silent", "optional", "conditional", "required" }` (Credential
/// Management Level 1). It is a member of `CredentialCreationOptions` / `CredentialRequestOptions`, next to
/// `publicKey`, so it is not part of the options JSON: the page passes it to `navigator.credentials.create()`.
public struct CredentialMediationRequirement: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let silent: Self = "silent"
    public static let optional: Self = "optional"
    public static let conditional: Self = "conditional"
    public static let required: Self = "required"
}

/// `enum LargeBlobSupport { "required", "preferred" }` (§10.1.5).
public struct LargeBlobSupport: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let required: Self = "required"
    public static let preferred: Self = "preferred"
}

/// `PublicKeyCredentialType`: only `"public-key"` is defined.
public enum PublicKeyCredentialType {
    public static let publicKey = "public-key"
}
