import Crypto
import Foundation
import CryptoExtras
import WebAuthn
import SesameCore

/// Compact JWS (RFC 7515 §7.1) as the provider signs and reads its own tokens:
/// `BASE64URL(header) "." BASE64URL(claims) "." BASE64URL(signature)` over the first two parts.
///
/// Only the algorithms the provider signs with are read back (`ES256`: the raw 64-byte r‖s of RFC 7518 §3.4;
/// `RS256`: RSASSA-PKCS1-v1_5 with SHA-256, §3.3); `none` and everything else is refused before any key is looked
/// at, and the key is chosen by `kid` among the provider's own keys, never taken from the token.
package enum JSONWebToken {
    package typealias Algorithm = IDTokenAlgorithm

    package struct Header: Codable, Sendable {
        package let alg: String
        package let kid: String?
        package let typ: String?
    }

    package struct Invalid: Error {}

    /// Signs `claims` (a JSON object) with `key`; the header carries `alg`, `kid` and `typ`.
    package static func sign(_ claims: some Encodable, key: SigningKey, type: String = "JWT") throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(Header(alg: key.algorithm.rawValue, kid: key.kid, typ: type))
        let payload = try encoder.encode(claims)
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
    }

    /// Checks a token's signature against the key its `kid` names and returns its header and claims bytes.
    /// Throws `Invalid` for anything else: wrong shape, unknown `alg` or `kid`, a key of another algorithm, a bad
    /// signature.
    package static func verify(_ token: String, keys: [any JWSVerificationKey]) throws -> (
        header: Header, claims: [UInt8]
    ) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count < 16_384,
            let headerBytes = try? Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
            let algorithm = Algorithm(rawValue: header.alg), let kid = header.kid,
            let key = keys.first(where: { $0.kid == kid }), key.algorithm == algorithm,
            let claims = try? Base64URL.decode(String(parts[1])),
            let signature = try? Base64URL.decode(String(parts[2]))
        else { throw Invalid() }
        let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard key.isValidSignature(signature, for: input) else { throw Invalid() }
        return (header, claims)
    }
}

/// A token-signing key pair of the provider.
package struct SigningKey: Sendable {
    package enum Material: Sendable {
        case p256(P256.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    package let kid: String
    package let material: Material
    package let createdAt: Date
    package let retiredAt: Date?

    package var algorithm: JSONWebToken.Algorithm {
        switch material {
        case .p256: .es256
        case .rsa: .rs256
        }
    }

    /// A new key of `algorithm` (RSA: 2048 bits, the size RFC 7518 §3.3 requires at least).
    package static func generate(_ algorithm: JSONWebToken.Algorithm, now: Date) throws -> SigningKey {
        let kid = Base64URL.encode(Secrets.random(12))
        switch algorithm {
        case .es256:
            return SigningKey(kid: kid, material: .p256(P256.Signing.PrivateKey()), createdAt: now, retiredAt: nil)
        case .rs256:
            return SigningKey(
                kid: kid, material: .rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048)), createdAt: now,
                retiredAt: nil)
        }
    }

    /// The private key's DER (PKCS#8 for P-256, PKCS#1 for RSA), which the store keeps sealed.
    package var privateKeyDER: [UInt8] {
        switch material {
        case .p256(let key): Array(key.derRepresentation)
        case .rsa(let key): Array(key.derRepresentation)
        }
    }

    package init(kid: String, material: Material, createdAt: Date, retiredAt: Date?) {
        self.kid = kid
        self.material = material
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }

    package init(kid: String, algorithm: JSONWebToken.Algorithm, der: [UInt8], createdAt: Date, retiredAt: Date?) throws
    {
        switch algorithm {
        case .es256: material = .p256(try P256.Signing.PrivateKey(derRepresentation: der))
        case .rs256: material = .rsa(try _RSA.Signing.PrivateKey(derRepresentation: der))
        }
        self.kid = kid
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }

    package func sign(_ input: [UInt8]) throws -> [UInt8] {
        switch material {
        case .p256(let key): Array(try key.signature(for: input).rawRepresentation)
        case .rsa(let key): Array(try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    package func isValidSignature(_ signature: [UInt8], for input: [UInt8]) -> Bool {
        switch material {
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.publicKey.isValidSignature(parsed, for: input)
        case .rsa(let key):
            return key.publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        }
    }

    /// The public key as a JWK (RFC 7517; EC members per RFC 7518 §6.2, RSA §6.3).
    package var publicJWK: [String: String] {
        switch material {
        case .p256(let key):
            let raw = Array(key.publicKey.rawRepresentation)
            return [
                "kty": "EC", "crv": "P-256", "x": Base64URL.encode(Array(raw[0..<32])),
                "y": Base64URL.encode(Array(raw[32..<64])),
                "use": "sig", "alg": algorithm.rawValue, "kid": kid,
            ]
        case .rsa(let key):
            let primitives = try? key.publicKey.getKeyPrimitives()
            return [
                "kty": "RSA", "n": Base64URL.encode(Array((primitives?.modulus ?? Data()).drop { $0 == 0 })),
                "e": Base64URL.encode(Array((primitives?.publicExponent ?? Data()).drop { $0 == 0 })), "use": "sig",
                "alg": algorithm.rawValue,
                "kid": kid,
            ]
        }
    }
}
