/// An error code the API answers with, in `{"error": "<code>", "message": "<text>"}`.
///
/// Opaque and extensible: the core declares the codes every feature may answer with (the request itself, who is
/// asking, the server) below; each feature declares its own in an `extension APIErrorCode` in its target and lists
/// them in its part of the vocabulary (`Vocabulary`). The composition root collects the parts into the one list
/// (`Vocabulary.server`) that the OpenAPI document (`ErrorCode` schema) and the page script are held to
/// (`VocabularyTests`); a code declared twice stops the composition.
public struct APIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

extension APIErrorCode {
    // The request itself
    package static let malformedJSON = APIErrorCode("malformed_json")
    package static let unsupportedMediaType = APIErrorCode("unsupported_media_type")
    package static let bodyTooLarge = APIErrorCode("body_too_large")
    package static let badRequest = APIErrorCode("bad_request")
    package static let notFound = APIErrorCode("not_found")
    package static let methodNotAllowed = APIErrorCode("method_not_allowed")
    package static let invalidClientData = APIErrorCode("invalid_client_data")
    // Who is asking
    package static let unauthenticated = APIErrorCode("unauthenticated")
    package static let csrfCheckFailed = APIErrorCode("csrf_check_failed")
    package static let originNotAllowed = APIErrorCode("origin_not_allowed")
    package static let accountDisabled = APIErrorCode("account_disabled")
    package static let reauthenticationRequired = APIErrorCode("reauthentication_required")
    /// A limited session (`SessionLimitation`) asked for something it may not do.
    package static let sessionLimited = APIErrorCode("session_limited")
    package static let tooManyAttempts = APIErrorCode("too_many_attempts")
    // The admin API and the console (`AdminGate`)
    /// The admin API and the console are for members of the `adminGroup` group.
    package static let notAnAdmin = APIErrorCode("not_an_admin")
    /// The admin API and the console need a session signed in (or re-authenticated) with a passkey.
    package static let passkeyRequired = APIErrorCode("passkey_required")
    /// An admin API token without the scope the route needs.
    package static let adminScopeMissing = APIErrorCode("admin_scope_missing")
    /// A change that would leave no administrator able to open the console (`AccountGroups.keepingAnAdministrator`):
    /// disabling, deleting or taking out of `adminGroup` its last enabled member with a passkey, removing that
    /// member's last passkey, or removing the group itself. Groups and operators' account changes both answer it.
    package static let lastAdministrator = APIErrorCode("last_administrator")
    // Ceremonies and ways in, shared by features that do not import each other
    package static let challengeInvalid = APIErrorCode("challenge_invalid")
    package static let lastWayIn = APIErrorCode("last_way_in")
    // The server
    package static let internalError = APIErrorCode("internal_error")
    package static let unavailable = APIErrorCode("unavailable")
    package static let storageFull = APIErrorCode("storage_full")
}
