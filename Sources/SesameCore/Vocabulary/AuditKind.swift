/// What an audit event records. `sesame audit`, `GET /api/account/audit` and the `sesame_auth_events_total`
/// metric use these names; `VocabularyTests` ties docs/server.md's list to them.
public enum AuditKind: String, CaseIterable, Sendable, Codable {
    case signUpPasskey = "sign_up.passkey"
    case signInPasskey = "sign_in.passkey"
    case signInPassword = "sign_in.password"
    case signInSecondFactor = "sign_in.second_factor"
    case signOut = "sign_out"
    case passkeyRegistration = "passkey.registration"
    case passkeyAdded = "passkey.added"
    case passkeyRenamed = "passkey.renamed"
    case passkeyRemoved = "passkey.removed"
    case passwordSet = "password.set"
    case passwordChanged = "password.changed"
    case passwordRemoved = "password.removed"
    case passwordRehashed = "password.rehashed"
    case accountRenamed = "account.renamed"
    case accountExported = "account.exported"
    case totpEnabled = "totp.enabled"
    case totpDisabled = "totp.disabled"
    case smsChangeStarted = "sms.change_started"
    case smsCodeSent = "sms.code_sent"
    case smsEnabled = "sms.enabled"
    case smsDisabled = "sms.disabled"
    case recoveryCodesGenerated = "recovery_codes.generated"
    case recoveryCodeUsed = "recovery_code.used"
    case sessionReauthenticated = "session.reauthenticated"
    case sessionRevoked = "session.revoked"
    case sessionRevokedAll = "session.revoked_all"
    case adminCreated = "admin.created"
    case adminDisabled = "admin.disabled"
    case adminEnabled = "admin.enabled"
    case adminDeleted = "admin.deleted"
    case adminExported = "admin.exported"
    case adminResealed = "admin.resealed"
    case clientAdded = "client.added"
    case clientRemoved = "client.removed"
    case clientUpdated = "client.updated"
    case clientSecretRotated = "client.secret_rotated"
    case signingKeysRotated = "signing_keys.rotated"
    case metadataImported = "metadata.imported"
    case appConsented = "app.consented"
    case appAuthorized = "app.authorized"
    case appAccessRevoked = "app.access_revoked"
    case codeReplayed = "app.code_replayed"
    case refreshTokenReused = "app.refresh_token_reused"
    case forwardAuthSignedIn = "forward_auth.signed_in"
    case keychainDeviceEnrolled = "keychain.device_enrolled"
    case keychainDeviceRevoked = "keychain.device_revoked"
    case keychainDeviceRemoved = "keychain.device_removed"
}

/// How an audited attempt ended.
public enum AuditOutcome: String, CaseIterable, Sendable, Codable {
    case success
    case failure
    /// The secret was right but the attempt was turned down (a disabled account).
    case refused
    /// The password was right; a second factor is still to come.
    case pendingSecondFactor = "pending_second_factor"
}
