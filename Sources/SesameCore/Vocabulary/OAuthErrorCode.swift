/// An error code of the OpenID Connect provider's endpoints, as OAuth 2.0 and OpenID Connect name them. They travel
/// in `error` of a redirect or of a JSON body `{"error", "error_description"}`, never in `APIErrorCode`'s shape.
///
/// Opaque and extensible like `APIErrorCode`: the identity provider declares the codes it answers with (in its
/// target) and lists them in its part of the vocabulary (`Vocabulary.oauthErrorCodes`).
public struct OAuthErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}
