import Foundation
import SesameCore

extension APIErrorCode {
    package static let keychainDeviceUnknown = APIErrorCode("keychain_device_unknown")
    package static let keychainDeviceMismatch = APIErrorCode("keychain_device_mismatch")
    package static let keychainInvalidMessage = APIErrorCode("keychain_invalid_message")
    package static let keychainVersionConflict = APIErrorCode("keychain_version_conflict")
    package static let keychainWrongVault = APIErrorCode("keychain_wrong_vault")
    package static let keychainLimitReached = APIErrorCode("keychain_limit_reached")
}

extension AuditKind {
    package static let keychainDeviceEnrolled = AuditKind("keychain.device_enrolled")
    package static let keychainDeviceRevoked = AuditKind("keychain.device_revoked")
    package static let keychainDeviceRemoved = AuditKind("keychain.device_removed")
}

extension Vocabulary {
    /// The words `SesameKeychainSync` declares (above); the composition root collects them into `Vocabulary.server`.
    package static let keychainSync = Vocabulary(
        owner: "SesameKeychainSync",
        errorCodes: [
            .keychainDeviceUnknown, .keychainDeviceMismatch, .keychainInvalidMessage, .keychainVersionConflict,
            .keychainWrongVault, .keychainLimitReached,
        ],
        auditKinds: [
            .keychainDeviceEnrolled, .keychainDeviceRevoked, .keychainDeviceRemoved,
        ],
        settings: ServerConfiguration.keychainSyncSettings
    )
}

extension APIFragment {
    /// This part's paths and components of the API document (`Resources/openapi.yaml`; the layout is `APIFragment`'s).
    package static let keychainSync = APIFragment(owner: "SesameKeychainSync", bundle: .module)
}
