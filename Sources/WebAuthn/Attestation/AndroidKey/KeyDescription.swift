import SwiftASN1

/// The Android key attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) of an `android-key` attestation
/// certificate, as Android's key attestation documentation defines it ("Attestation extension schema"; W3C WebAuthn
/// §8.4.1 refers to it):
///
/// ```
/// KeyDescription ::= SEQUENCE {
///     attestationVersion        INTEGER,
///     attestationSecurityLevel  SecurityLevel,      -- ENUMERATED { Software(0), TrustedEnvironment(1), StrongBox(2) }
///     keyMintVersion            INTEGER,            -- keymasterVersion before KeyMint
///     keyMintSecurityLevel      SecurityLevel,
///     attestationChallenge      OCTET STRING,
///     uniqueId                  OCTET STRING,
///     softwareEnforced          AuthorizationList,
///     hardwareEnforced          AuthorizationList,  -- "teeEnforced" in WebAuthn
/// }
/// AuthorizationList ::= SEQUENCE {
///     purpose          [1]   EXPLICIT SET OF INTEGER OPTIONAL,
///     ...
///     allApplications  [600] EXPLICIT NULL OPTIONAL,
///     ...
///     origin           [702] EXPLICIT INTEGER OPTIONAL,
///     ...                                           -- many more, all [n] EXPLICIT and OPTIONAL
/// }
/// ```
/// The extension is DER. Every AuthorizationList member must be a context-specific explicit tag, at most once;
/// `purpose`, `allApplications` and `origin` are decoded strictly, the others only as well-formed DER (WebAuthn
/// does not use them). Nothing may follow `hardwareEnforced`.
public struct AndroidKeyDescription: Sendable, Hashable {
    public enum SecurityLevel: Int, Sendable, Hashable {
        case software = 0
        case trustedEnvironment = 1
        case strongBox = 2
    }

    /// One authorization list, with the members WebAuthn checks.
    public struct AuthorizationList: Sendable, Hashable {
        /// `purpose` values (KM_PURPOSE_SIGN = 2), nil when absent.
        public let purpose: Set<Int>?
        /// Whether `allApplications` is present.
        public let allApplications: Bool
        /// `origin` (KM_ORIGIN_GENERATED = 0), nil when absent.
        public let origin: Int?
        /// Every member's tag number, in order.
        public let tags: [UInt]

        public static let purposeTag: UInt = 1
        public static let allApplicationsTag: UInt = 600
        public static let originTag: UInt = 702
    }

    /// id-android-key-attestation (1.3.6.1.4.1.11129.2.1.17).
    public static let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
    /// KM_PURPOSE_SIGN.
    public static let purposeSign = 2
    /// KM_ORIGIN_GENERATED.
    public static let originGenerated = 0

    public let attestationVersion: Int
    public let attestationSecurityLevel: SecurityLevel
    public let keyMintVersion: Int
    public let keyMintSecurityLevel: SecurityLevel
    public let attestationChallenge: [UInt8]
    public let uniqueId: [UInt8]
    public let softwareEnforced: AuthorizationList
    /// `hardwareEnforced`, which W3C WebAuthn calls `teeEnforced`.
    public let teeEnforced: AuthorizationList

    /// Parses the extension value (the bytes inside the extnValue OCTET STRING). Errors are
    /// `.androidKeyDescriptionInvalid`.
    public init(derEncoded bytes: [UInt8]) throws(WebAuthnError) {
        do {
            let root = try DER.parse(bytes)
            self = try DER.sequence(root, identifier: .sequence) { nodes in
                let attestationVersion = try Int(derEncoded: &nodes)
                let attestationSecurityLevel = try Self.securityLevel(&nodes)
                let keyMintVersion = try Int(derEncoded: &nodes)
                let keyMintSecurityLevel = try Self.securityLevel(&nodes)
                let challenge = try ASN1OctetString(derEncoded: &nodes)
                let uniqueId = try ASN1OctetString(derEncoded: &nodes)
                let software = try Self.authorizationList(&nodes)
                let hardware = try Self.authorizationList(&nodes)
                return AndroidKeyDescription(
                    attestationVersion: attestationVersion, attestationSecurityLevel: attestationSecurityLevel,
                    keyMintVersion: keyMintVersion, keyMintSecurityLevel: keyMintSecurityLevel,
                    attestationChallenge: Array(challenge.bytes), uniqueId: Array(uniqueId.bytes),
                    softwareEnforced: software, teeEnforced: hardware)
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw WebAuthnError(.androidKeyDescriptionInvalid, detail: "the key description is not the documented DER")
        }
    }

    private init(
        attestationVersion: Int, attestationSecurityLevel: SecurityLevel, keyMintVersion: Int,
        keyMintSecurityLevel: SecurityLevel, attestationChallenge: [UInt8], uniqueId: [UInt8],
        softwareEnforced: AuthorizationList, teeEnforced: AuthorizationList
    ) {
        self.attestationVersion = attestationVersion
        self.attestationSecurityLevel = attestationSecurityLevel
        self.keyMintVersion = keyMintVersion
        self.keyMintSecurityLevel = keyMintSecurityLevel
        self.attestationChallenge = attestationChallenge
        self.uniqueId = uniqueId
        self.softwareEnforced = softwareEnforced
        self.teeEnforced = teeEnforced
    }

    private static func securityLevel(_ nodes: inout ASN1NodeCollection.Iterator) throws -> SecurityLevel {
        let raw = try Int(derEncoded: &nodes, withIdentifier: .enumerated)
        guard let level = SecurityLevel(rawValue: raw) else {
            throw WebAuthnError(.androidKeyDescriptionInvalid, detail: "unknown security level \(raw)")
        }
        return level
    }

    private static func authorizationList(_ nodes: inout ASN1NodeCollection.Iterator) throws -> AuthorizationList {
        guard let node = nodes.next() else {
            throw WebAuthnError(.androidKeyDescriptionInvalid, detail: "an authorization list is missing")
        }
        return try DER.sequence(node, identifier: .sequence) { members in
            var builder = ListBuilder()
            while let member = members.next() { try builder.add(member) }
            return builder.list
        }
    }

    /// Collects the members of one AuthorizationList.
    private struct ListBuilder {
        var purpose: Set<Int>?
        var allApplications = false
        var origin: Int?
        var tags: [UInt] = []

        var list: AuthorizationList {
            AuthorizationList(purpose: purpose, allApplications: allApplications, origin: origin, tags: tags)
        }

        mutating func add(_ member: ASN1Node) throws {
            let identifier = member.identifier
            guard identifier.tagClass == .contextSpecific, case .constructed(let inner) = member.content else {
                throw WebAuthnError(
                    .androidKeyDescriptionInvalid, detail: "an authorization list member is not an explicit tag")
            }
            guard !tags.contains(identifier.tagNumber) else {
                throw WebAuthnError(
                    .androidKeyDescriptionInvalid, detail: "authorization tag \(identifier.tagNumber) repeats")
            }
            tags.append(identifier.tagNumber)
            var children = inner.makeIterator()
            guard let value = children.next(), children.next() == nil else {
                throw WebAuthnError(
                    .androidKeyDescriptionInvalid,
                    detail: "authorization tag \(identifier.tagNumber) must hold exactly one value")
            }
            switch identifier.tagNumber {
            case AuthorizationList.purposeTag:
                let values = try DER.set(of: Int.self, identifier: .set, rootNode: value)
                purpose = Set(values)
                guard purpose?.count == values.count else {
                    throw WebAuthnError(.androidKeyDescriptionInvalid, detail: "purpose repeats a value")
                }
            case AuthorizationList.allApplicationsTag:
                _ = try ASN1Null(derEncoded: value)
                allApplications = true
            case AuthorizationList.originTag:
                origin = try Int(derEncoded: value)
            default:
                break  // well-formed DER (DER.parse checked it); not used by WebAuthn
            }
        }
    }
}
