import Crypto
import Foundation
import JWTKit
import WebAuthn
import SesameCore

/// A client's public key from the JWK set it registered (RFC 7517): EC P-256 for ES256 or RSA (2048 bits or more)
/// for RS256, with a `kid`, as a jwt-kit key that checks its `private_key_jwt` assertions (OpenID Connect Core §9).
/// Other keys in the set are refused when it is registered, so nothing unexpected is kept.
package struct ClientPublicKey: TokenKey {
    package let kid: String
    package let material: TokenKeyMaterial<ES256PublicKey, JWTKit.Insecure.RSA.PublicKey>

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

    /// The keys of a JWK set document; a key that is private, of another type or curve, without `kid`, or whose
    /// `alg`/`use` say it is for something else makes the whole set refused.
    package static func parse(_ json: some Collection<UInt8>) throws -> [ClientPublicKey] {
        guard json.count <= 64 * 1024, let set = try? JSONDecoder().decode(JWKSet.self, from: Data(json)),
            !set.keys.isEmpty, set.keys.count <= 16
        else {
            throw IdentityProviderError(
                code: .clientKeysRefused, message: "expected a JWK set {\"keys\": [...]} of 1 to 16 keys")
        }
        var keys: [ClientPublicKey] = []
        for jwk in set.keys {
            guard let kid = jwk.kid, (1...128).contains(kid.count) else {
                throw IdentityProviderError(code: .clientKeysRefused, message: "every key needs a kid")
            }
            guard jwk.d == nil else {
                throw IdentityProviderError(
                    code: .clientKeysRefused, message: "key \(kid) is a private key: register public keys")
            }
            guard jwk.use == nil || jwk.use == "sig" else {
                throw IdentityProviderError(code: .clientKeysRefused, message: "key \(kid) is not for signing")
            }
            switch jwk.kty {
            case "EC":
                guard jwk.crv == "P-256", jwk.alg == nil || jwk.alg == "ES256", let x = jwk.x, let y = jwk.y,
                    let xBytes = try? Base64URL.decode(x), let yBytes = try? Base64URL.decode(y),
                    xBytes.count == 32, yBytes.count == 32,
                    let point = try? P256.Signing.PublicKey(rawRepresentation: xBytes + yBytes),
                    let key = try? ES256PublicKey(backing: point)
                else {
                    throw IdentityProviderError(
                        code: .clientKeysRefused, message: "key \(kid): EC keys must be P-256 points (ES256)")
                }
                keys.append(ClientPublicKey(kid: kid, material: .es256(key)))
            case "RSA":
                // jwt-kit refuses RSA keys of fewer than 2048 bits.
                guard jwk.alg == nil || jwk.alg == "RS256", let n = jwk.n, let e = jwk.e,
                    let key = try? JWTKit.Insecure.RSA.PublicKey(modulus: n, exponent: e)
                else {
                    throw IdentityProviderError(
                        code: .clientKeysRefused, message: "key \(kid): RSA keys must be 2048 bits or more (RS256)")
                }
                keys.append(ClientPublicKey(kid: kid, material: .rs256(key)))
            default:
                throw IdentityProviderError(code: .clientKeysRefused, message: "key \(kid): only EC P-256 and RSA keys")
            }
        }
        guard Set(keys.map(\.kid)).count == keys.count else {
            throw IdentityProviderError(code: .clientKeysRefused, message: "two keys share a kid")
        }
        return keys
    }
}
