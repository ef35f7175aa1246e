import Crypto
import CryptoExtras
import Foundation
import X509

/// A JSON Web Signature in compact serialization (RFC 7515 §7.1), read strictly, for the two places WebAuthn meets
/// one: an `android-safetynet` response and a FIDO Metadata Service BLOB. Both carry their signer's certificate
/// chain in the `x5c` header member.
///
/// ```
/// BASE64URL(UTF8(header)) '.' BASE64URL(payload) '.' BASE64URL(signature)
/// header = { "alg": "ES256" | "RS256" | "PS256", "x5c": [ base64 DER, ... ], ? "typ": string, ? "kid": string,
///            ? "x5t": string, ? "x5t#S256": string }
/// ```
/// Refused: any other header member (`crit`, `jku`, `jwk`, `x5u`: nothing is ever fetched), a repeated member, `alg`
/// `none` or any algorithm not listed, padding or the standard alphabet in base64url, an `x5c` entry that is not
/// canonical padded base64 (RFC 7515 §4.1.6), an `x5c[0]` that is not one DER certificate, a repeated entry, more
/// than ``maximumCertificates`` certificates, input longer than the caller's limit. A later `x5c` entry that is
/// base64 but not a certificate this reader can parse does not fail the parse: the signature can still be checked
/// with `x5c[0]`, and ``chain()`` reports the entry, so that a caller can tell a bad signature from a bad chain. ES256 signatures are the 64-byte `R ‖ S` of RFC 7518 §3.4
/// (a DER signature is refused); the key must fit the algorithm.
///
/// Why not jwt-kit: the library depends only on swift-crypto, swift-certificates and swift-asn1, and needs three
/// algorithms, one header shape and no key sets; jwt-kit would bring its own JSON, key and claim machinery for a
/// verifier of about a hundred lines, which is fuzzed (`FuzzTesting`, target `FuzzJWS`).
public struct CompactJWS: Sendable {
    public enum Algorithm: String, Sendable, Hashable {
        case es256 = "ES256"
        case rs256 = "RS256"
        case ps256 = "PS256"
    }

    /// The most certificates accepted in `x5c`.
    public static let maximumCertificates = 6

    public let algorithm: Algorithm
    /// `typ`, if present.
    public let type: String?
    /// `x5c[0]`, whose key signed the JWS.
    public let signer: Certificate
    /// Every `x5c` entry, signer first, nil where the entry is not a DER certificate.
    private let x5c: [Certificate?]
    /// The decoded payload.
    public let payload: [UInt8]
    /// The decoded signature.
    public let signature: [UInt8]
    /// The JWS signing input: the first two parts as received, with the dot.
    let signingInput: [UInt8]

    private static let allowedHeaderMembers: Set<String> = ["alg", "typ", "x5c", "kid", "x5t", "x5t#S256"]

    /// Parses `text` (at most `maximumLength` bytes). Errors are `.invalidJWS` and say which rule failed, never
    /// the input.
    public init(_ text: some StringProtocol, maximumLength: Int) throws(WebAuthnError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength else {
            throw WebAuthnError(.invalidJWS, detail: "longer than \(maximumLength) bytes")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw WebAuthnError(.invalidJWS, detail: "not three non-empty dot-separated parts")
        }
        let headerBytes = try Self.base64URL(parts[0], "header")
        payload = try Self.base64URL(parts[1], "payload")
        signature = try Self.base64URL(parts[2], "signature")
        signingInput = Array(bytes[0..<(parts[0].count + 1 + parts[1].count)])

        // The header: a JSON object with unique, known members.
        guard let names = JSONMemberNames.topLevel(headerBytes),
            let object = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any]
        else {
            throw WebAuthnError(.invalidJWS, detail: "the header is not a JSON object")
        }
        var seen: Set<String> = []
        for raw in names {
            guard let name = try? JSONDecoder().decode(String.self, from: Data([0x22] + raw + [0x22])),
                seen.insert(name).inserted
            else {
                throw WebAuthnError(.invalidJWS, detail: "the header repeats a member")
            }
            guard Self.allowedHeaderMembers.contains(name) else {
                throw WebAuthnError(.invalidJWS, detail: "the header has a member this reader does not accept")
            }
        }
        guard let alg = object["alg"] as? String, let algorithm = Algorithm(rawValue: alg) else {
            throw WebAuthnError(.invalidJWS, detail: "alg must be ES256, RS256 or PS256")
        }
        self.algorithm = algorithm
        if let typ = object["typ"] {
            guard let typ = typ as? String else { throw WebAuthnError(.invalidJWS, detail: "typ is not a string") }
            type = typ
        } else {
            type = nil
        }
        guard let x5c = object["x5c"] as? [Any], !x5c.isEmpty else {
            throw WebAuthnError(.invalidJWS, detail: "x5c must be a non-empty array")
        }
        guard x5c.count <= Self.maximumCertificates else {
            throw WebAuthnError(.invalidJWS, detail: "x5c has more than \(Self.maximumCertificates) certificates")
        }
        var entries: [[UInt8]] = []
        for (index, entry) in x5c.enumerated() {
            guard let text = entry as? String, let data = Data(base64Encoded: text),
                data.base64EncodedString() == text
            else {
                throw WebAuthnError(.invalidJWS, detail: "x5c[\(index)] is not canonical base64")
            }
            guard !entries.contains(Array(data)) else {
                throw WebAuthnError(.invalidJWS, detail: "x5c[\(index)] repeats an earlier certificate")
            }
            entries.append(Array(data))
        }
        guard let signer = try? Certificate(derEncoded: entries[0]) else {
            throw WebAuthnError(.invalidJWS, detail: "x5c[0] is not a DER certificate")
        }
        self.signer = signer
        self.x5c = [signer] + entries.dropFirst().map { try? Certificate(derEncoded: $0) }
    }

    /// The `x5c` chain, signer first. Throws `.invalidJWS` naming the first entry that is not a DER certificate;
    /// callers report it as their own chain failure.
    public func chain() throws(WebAuthnError) -> [Certificate] {
        var certificates: [Certificate] = []
        for (index, entry) in x5c.enumerated() {
            guard let entry else {
                throw WebAuthnError(.invalidJWS, detail: "x5c[\(index)] is not a DER certificate")
            }
            certificates.append(entry)
        }
        return certificates
    }

    /// Whether the signature verifies with the key of the first `x5c` certificate. A key that does not fit the
    /// algorithm (ES256 needs P-256, RS256 and PS256 need RSA) does not verify.
    public var signatureIsValid: Bool {
        let key = signer.publicKey
        switch algorithm {
        case .es256:
            guard let key = P256.Signing.PublicKey(key), signature.count == 64,
                let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(sig, for: signingInput)
        case .rs256, .ps256:
            guard let key = _RSA.Signing.PublicKey(key) else { return false }
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: signingInput),
                padding: algorithm == .rs256 ? .insecurePKCS1v1_5 : .PSS)
        }
    }

    /// Strict unpadded base64url of one part.
    private static func base64URL(_ part: ArraySlice<UInt8>, _ name: String) throws(WebAuthnError) -> [UInt8] {
        do {
            return try Base64URL.decode(String(decoding: part, as: UTF8.self))
        } catch {
            throw WebAuthnError(.invalidJWS, detail: "the \(name) is not unpadded base64url")
        }
    }
}
