/// Every error code the API answers with, in `{"error": "<code>", "message": "<text>"}`.
///
/// This list is the one source: `APIError` takes only these, the OpenAPI document names each of them
/// (`ErrorCode` schema), and the page script has one sentence for each and none for codes not here
/// (`VocabularyTests`).
public enum APIErrorCode: String, CaseIterable, Sendable {
    // The request itself
    case malformedJSON = "malformed_json"
    case unsupportedMediaType = "unsupported_media_type"
    case bodyTooLarge = "body_too_large"
    case badRequest = "bad_request"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case invalidClientData = "invalid_client_data"
    // A field with a value the endpoint does not accept
    case invalidUsername = "invalid_username"
    case invalidDisplayName = "invalid_display_name"
    case invalidPassword = "invalid_password"
    case invalidCurrentPassword = "invalid_current_password"
    case invalidPhone = "invalid_phone"
    case invalidName = "invalid_name"
    case invalidKind = "invalid_kind"
    case invalidMediation = "invalid_mediation"
    case invalidTheme = "invalid_theme"
    case invalidCredentialID = "invalid_credential_id"
    case invalidFactor = "invalid_factor"
    // Who is asking
    case unauthenticated
    case csrfCheckFailed = "csrf_check_failed"
    case originNotAllowed = "origin_not_allowed"
    case hostNotAllowed = "host_not_allowed"
    case invalidCredentials = "invalid_credentials"
    case wrongPassword = "wrong_password"
    case accountDisabled = "account_disabled"
    case reauthenticationRequired = "reauthentication_required"
    case secondFactorRequired = "second_factor_required"
    case tooManyAttempts = "too_many_attempts"
    // Ceremonies
    case challengeInvalid = "challenge_invalid"
    case registrationFailed = "registration_failed"
    case authenticationFailed = "authentication_failed"
    case unknownCredential = "unknown_credential"
    case usernameTaken = "username_taken"
    case credentialExists = "credential_exists"
    // Ways in and second factors
    case invalidCode = "invalid_code"
    case factorNotEnabled = "factor_not_enabled"
    case smsNotEnabled = "sms_not_enabled"
    case smsNotSent = "sms_not_sent"
    case totpAlreadyEnabled = "totp_already_enabled"
    case noPendingTOTP = "no_pending_totp"
    case noPasskey = "no_passkey"
    case noPassword = "no_password"
    case lastWayIn = "last_way_in"
    // Keychain sync
    case keychainDeviceUnknown = "keychain_device_unknown"
    case keychainDeviceMismatch = "keychain_device_mismatch"
    case keychainInvalidMessage = "keychain_invalid_message"
    case keychainVersionConflict = "keychain_version_conflict"
    case keychainWrongVault = "keychain_wrong_vault"
    case keychainLimitReached = "keychain_limit_reached"
    // The server
    case internalError = "internal_error"
    case unavailable
    case storageFull = "storage_full"
}
