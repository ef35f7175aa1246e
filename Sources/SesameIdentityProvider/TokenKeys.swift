import Crypto
import Foundation
import JWTKit
import SesameCore

/// The claims of a token the provider signs or reads. jwt-kit calls `verify(using:)` after the signature holds;
/// the provider checks times and audiences where it reads the claims, against the server's clock (`ServerClock`,
/// which tests advance), so this step checks nothing more.
package protocol TokenClaims: JWTPayload {}

extension TokenClaims {
    package func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A key a token may be signed with: the provider's own signing keys (private) and the public keys a client
/// registered for `private_key_jwt` (OpenID Connect Core §9). Each has one `kid` and one algorithm.
package protocol TokenKey: Sendable {
    associatedtype ESKey: ECDSAKey where ESKey.Curve == P256
    associatedtype RSKey: RSAKey
    var kid: String { get }
    var material: TokenKeyMaterial<ESKey, RSKey> { get }
}

/// A jwt-kit key of one of the two algorithms the provider signs and reads (`IDTokenAlgorithm`).
package enum TokenKeyMaterial<ESKey: ECDSAKey, RSKey: RSAKey>: Sendable where ESKey.Curve == P256 {
    /// ECDSA on P-256 with SHA-256, the signature the raw 64-byte r‖s (RFC 7518 §3.4).
    case es256(ESKey)
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
    case rs256(RSKey)

    package var algorithm: IDTokenAlgorithm {
        switch self {
        case .es256: .es256
        case .rs256: .rs256
        }
    }
}

extension TokenKey {
    package var algorithm: IDTokenAlgorithm { material.algorithm }

    /// Adds the key to `keys` under its `kid`, bound to its one algorithm, with the provider's parser and serializer.
    fileprivate func add(to keys: JWTKeyCollection) async {
        let kid = JWKIdentifier(string: kid)
        switch material {
        case .es256(let key):
            await keys.add(ecdsa: key, kid: kid, parser: TokenKeys.parser, serializer: TokenKeys.serializer)
        case .rs256(let key):
            await keys.add(
                rsa: key, digestAlgorithm: .sha256, kid: kid, parser: TokenKeys.parser, serializer: TokenKeys.serializer
            )
        }
    }
}

/// Compact JWS (RFC 7515) as the provider signs and reads tokens, through jwt-kit: a key collection in which every
/// key is found by its `kid` only (there is no default key to fall back on).
///
/// Reading refuses a token before any signature is checked unless its header names one of these keys by `kid` and
/// that key's own algorithm as `alg`: `none`, HMAC and another key's algorithm never reach a key. jwt-kit's
/// reasons for a refusal are not passed on (they may quote the token); the caller answers with its own OAuth error.
package struct TokenKeys: Sendable {
    /// The longest token read: more is refused unread.
    package static let maximumTokenLength = 16_383

    /// Headers and claims are written with sorted keys and unescaped slashes: `{"alg":…,"kid":…,"typ":…}`.
    package static let serializer: DefaultJWTSerializer = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return DefaultJWTSerializer(jsonEncoder: encoder)
    }()
    package static let parser = DefaultJWTParser(jsonDecoder: JSONDecoder())

    private let collection: JWTKeyCollection
    private let algorithms: [String: IDTokenAlgorithm]

    package init(_ keys: [any TokenKey]) async {
        let collection = JWTKeyCollection(defaultJWTParser: Self.parser, defaultJWTSerializer: Self.serializer)
        for key in keys { await key.add(to: collection) }
        // jwt-kit makes the first key added the default, used for a token whose `kid` it does not know: none here.
        // A `kid` added twice is the last key, in jwt-kit and in `algorithms` alike.
        await collection.clearDefault()
        self.collection = collection
        self.algorithms = Dictionary(keys.map { ($0.kid, $0.algorithm) }, uniquingKeysWith: { _, last in last })
    }

    /// Signs `claims` with the key `kid`; the header carries `alg` (the key's), `kid` and `typ`. A failure is the
    /// provider's `server_error`.
    package func sign(_ claims: some TokenClaims, kid: String, type: String = "JWT") async throws -> String {
        guard algorithms[kid] != nil else { throw Self.signingFailed }
        var header = JWTHeader()
        header.typ = type
        do {
            return try await collection.sign(claims, kid: JWKIdentifier(string: kid), header: header)
        } catch {
            throw Self.signingFailed
        }
    }

    private static let signingFailed = OAuthError(
        .serverError, "The token could not be signed.", status: .internalServerError)

    /// The `typ` and claims of a token that one of these keys signed. Throws `IdentityProviderError.tokenRefused` for anything else: too long,
    /// the wrong shape, an unknown `kid`, an `alg` other than its key's, a bad signature, claims of another shape.
    package func verify<Claims: TokenClaims>(_ token: String, as _: Claims.Type = Claims.self) async throws -> (
        type: String?, claims: Claims
    ) {
        guard token.utf8.count <= Self.maximumTokenLength,
            let header = try? Self.parser.parse(Array(token.utf8), as: Claims.self).header,
            let kid = header.kid, let algorithm = algorithms[kid], header.alg == algorithm.rawValue,
            let claims = try? await collection.verify(token, as: Claims.self)
        else { throw IdentityProviderError.tokenRefused() }
        return (header.typ, claims)
    }

    /// The claims of a token whose signature is not checked yet (to find which client's keys check it).
    package static func unverifiedClaims<Claims: TokenClaims>(_ token: String, as _: Claims.Type = Claims.self)
        -> Claims?
    {
        guard token.utf8.count <= maximumTokenLength else { return nil }
        return try? parser.parse(Array(token.utf8), as: Claims.self).payload
    }
}
