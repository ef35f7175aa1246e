import Crypto
import CryptoExtras
import Foundation
import WebAuthn
import SesameCore

/// A key that can check a JWS signature: the provider's own signing keys, and the public keys a client registered
/// for `private_key_jwt` (OpenID Connect Core §9).
package protocol JWSVerificationKey: Sendable {
    var kid: String { get }
    var algorithm: JSONWebToken.Algorithm { get }
    func isValidSignature(_ signature: [UInt8], for input: [UInt8]) -> Bool
}

extension SigningKey: JWSVerificationKey {}

/// A client's public key from the JWK set it registered (RFC 7517): EC P-256 for ES256 or RSA (2048 bits or more)
/// for RS256, with a `kid`. Other keys in the set are refused when it is registered, so nothing unexpected is kept.
package struct ClientPublicKey: JWSVerificationKey {
    package enum Material: Sendable {
        case p256(P256.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    package let kid: String
    package let material: Material

    package var algorithm: JSONWebToken.Algorithm {
        switch material {
        case .p256: .es256
        case .rsa: .rs256
        }
    }

    package struct JWK: Decodable {
        package let kty: String
        package let kid: String?
        package let alg: String?
        package let use: String?
        package let crv: String?
        package let x: String?
        package let y: String?
        package let n: String?
        package let e: String?
        package let d: String?
    }

    package struct JWKSet: Decodable { package let keys: [JWK] }

    package struct Refused: Error, CustomStringConvertible { package let description: String }

    /// The keys of a JWK set document; a key that is private, of another type or curve, without `kid`, or whose
    /// `alg`/`use` say it is for something else makes the whole set refused.
    package static func parse(_ json: some Collection<UInt8>) throws -> [ClientPublicKey] {
        guard json.count <= 64 * 1024, let set = try? JSONDecoder().decode(JWKSet.self, from: Data(json)),
            !set.keys.isEmpty, set.keys.count <= 16
        else { throw Refused(description: "expected a JWK set {\"keys\": [...]} of 1 to 16 keys") }
        var keys: [ClientPublicKey] = []
        for jwk in set.keys {
            guard let kid = jwk.kid, (1...128).contains(kid.count) else {
                throw Refused(description: "every key needs a kid")
            }
            guard jwk.d == nil else { throw Refused(description: "key \(kid) is a private key: register public keys") }
            guard jwk.use == nil || jwk.use == "sig" else {
                throw Refused(description: "key \(kid) is not for signing")
            }
            switch jwk.kty {
            case "EC":
                guard jwk.crv == "P-256", jwk.alg == nil || jwk.alg == "ES256", let x = jwk.x, let y = jwk.y,
                    let xBytes = try? Base64URL.decode(x), let yBytes = try? Base64URL.decode(y),
                    xBytes.count == 32, yBytes.count == 32,
                    let key = try? P256.Signing.PublicKey(rawRepresentation: xBytes + yBytes)
                else { throw Refused(description: "key \(kid): EC keys must be P-256 points (ES256)") }
                keys.append(ClientPublicKey(kid: kid, material: .p256(key)))
            case "RSA":
                guard jwk.alg == nil || jwk.alg == "RS256", let n = jwk.n, let e = jwk.e,
                    let nBytes = try? Base64URL.decode(n), let eBytes = try? Base64URL.decode(e),
                    let key = try? _RSA.Signing.PublicKey(n: nBytes, e: eBytes), key.keySizeInBits >= 2048
                else { throw Refused(description: "key \(kid): RSA keys must be 2048 bits or more (RS256)") }
                keys.append(ClientPublicKey(kid: kid, material: .rsa(key)))
            default:
                throw Refused(description: "key \(kid): only EC P-256 and RSA keys")
            }
        }
        guard Set(keys.map(\.kid)).count == keys.count else { throw Refused(description: "two keys share a kid") }
        return keys
    }

    package func isValidSignature(_ signature: [UInt8], for input: [UInt8]) -> Bool {
        switch material {
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: input)
        case .rsa(let key):
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        }
    }
}
