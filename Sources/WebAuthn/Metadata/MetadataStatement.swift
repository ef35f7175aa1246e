import Foundation
import X509

/// An authenticator status from a FIDO metadata status report (FIDO Metadata Service v3.0 §3.1.4,
/// `AuthenticatorStatus`). An open set: a status this library does not know is kept as received.
public struct AuthenticatorStatus: OpenStringEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let notFIDOCertified: Self = "NOT_FIDO_CERTIFIED"
    public static let fidoCertified: Self = "FIDO_CERTIFIED"
    public static let userVerificationBypass: Self = "USER_VERIFICATION_BYPASS"
    public static let attestationKeyCompromise: Self = "ATTESTATION_KEY_COMPROMISE"
    public static let userKeyRemoteCompromise: Self = "USER_KEY_REMOTE_COMPROMISE"
    public static let userKeyPhysicalCompromise: Self = "USER_KEY_PHYSICAL_COMPROMISE"
    public static let updateAvailable: Self = "UPDATE_AVAILABLE"
    public static let revoked: Self = "REVOKED"
    public static let selfAssertionSubmitted: Self = "SELF_ASSERTION_SUBMITTED"
    public static let fidoCertifiedL1: Self = "FIDO_CERTIFIED_L1"
    public static let fidoCertifiedL1plus: Self = "FIDO_CERTIFIED_L1plus"
    public static let fidoCertifiedL2: Self = "FIDO_CERTIFIED_L2"
    public static let fidoCertifiedL2plus: Self = "FIDO_CERTIFIED_L2plus"
    public static let fidoCertifiedL3: Self = "FIDO_CERTIFIED_L3"
    public static let fidoCertifiedL3plus: Self = "FIDO_CERTIFIED_L3plus"

    /// The statuses a relying party refuses by default: the authenticator (or its attestation key, or the keys it
    /// holds) is known to be broken, or its certification was withdrawn.
    public static let undesired: Set<AuthenticatorStatus> = [
        .revoked, .userVerificationBypass, .attestationKeyCompromise, .userKeyRemoteCompromise,
        .userKeyPhysicalCompromise,
    ]

    /// The certification level this status grants, nil for a status that is not a certification.
    /// `FIDO_CERTIFIED` (without a level) is the legacy name of L1.
    public var certificationLevel: CertificationLevel? {
        switch self {
        case .fidoCertified, .fidoCertifiedL1: .l1
        case .fidoCertifiedL1plus: .l1plus
        case .fidoCertifiedL2: .l2
        case .fidoCertifiedL2plus: .l2plus
        case .fidoCertifiedL3: .l3
        case .fidoCertifiedL3plus: .l3plus
        default: nil
        }
    }
}

/// FIDO Authenticator Certification levels, in increasing order.
public enum CertificationLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case l1 = 1, l1plus, l2, l2plus, l3, l3plus

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The status name that grants this level, e.g. `FIDO_CERTIFIED_L2`.
    public var status: AuthenticatorStatus {
        switch self {
        case .l1: .fidoCertifiedL1
        case .l1plus: .fidoCertifiedL1plus
        case .l2: .fidoCertifiedL2
        case .l2plus: .fidoCertifiedL2plus
        case .l3: .fidoCertifiedL3
        case .l3plus: .fidoCertifiedL3plus
        }
    }

    public var description: String { status.rawValue }

    /// Parses `FIDO_CERTIFIED_L1` … `FIDO_CERTIFIED_L3plus` (and `FIDO_CERTIFIED`, which is L1).
    public init?(status: String) {
        guard let level = AuthenticatorStatus(rawValue: status).certificationLevel else { return nil }
        self = level
    }
}

/// `StatusReport` (FIDO MDS v3.0 §3.1.3): one event in an authenticator's certification or security history.
public struct StatusReport: Sendable, Hashable, Decodable {
    public let status: AuthenticatorStatus
    /// `YYYY-MM-DD`, as published.
    public let effectiveDate: String?
    public let authenticatorVersion: UInt32?
    /// Base64 DER of the affected attestation certificate, for ATTESTATION_KEY_COMPROMISE.
    public let certificate: String?
    public let url: String?
    public let certificationDescriptor: String?
    public let certificateNumber: String?
}

/// The parts of a FIDO metadata statement (FIDO Metadata Statement v3.0 §4) that Sesame uses: who the
/// authenticator is, which attestation types it makes, and the roots its attestations chain to. Other members are
/// ignored (the format grows; ignoring what is not used keeps new BLOBs readable).
public struct MetadataStatement: Sendable, Hashable, Decodable {
    public let description: String
    public let aaguid: String?
    public let aaid: String?
    public let attestationCertificateKeyIdentifiers: [String]?
    public let authenticatorVersion: UInt32
    public let protocolFamily: String
    public let schema: Int
    /// `basic_full`, `basic_surrogate`, `attca`, `anonca`, `ecdaa`, `none`.
    public let attestationTypes: [String]
    /// Base64 (standard alphabet) DER certificates.
    public let attestationRootCertificates: [String]
    /// A `data:` URI, if the statement has an icon.
    public let icon: String?
}

/// `MetadataBLOBPayloadEntry` (FIDO MDS v3.0 §3.1.1): one authenticator model in a metadata BLOB.
public struct MetadataEntry: Sendable, Hashable, Decodable {
    public let aaid: String?
    public let aaguid: String?
    /// Lower-case hex SHA-1 key identifiers of attestation certificates (U2F authenticators have no AAGUID).
    public let attestationCertificateKeyIdentifiers: [String]?
    public let metadataStatement: MetadataStatement?
    public let statusReports: [StatusReport]
    public let timeOfLastStatusChange: String

    /// The highest certification level any status report grants (nil: not certified).
    public var certificationLevel: CertificationLevel? {
        statusReports.compactMap(\.status.certificationLevel).max()
    }

    /// The reports whose status is in `statuses`, in BLOB order.
    public func reports(in statuses: Set<AuthenticatorStatus>) -> [StatusReport] {
        statusReports.filter { statuses.contains($0.status) }
    }

    /// The model's name.
    public var name: String? { metadataStatement?.description }
}
