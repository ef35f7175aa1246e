import AuthenticatorSigning
import WebAuthn

extension VirtualAuthenticator {
    /// The signature algorithms this authenticator can make credentials with, by COSE identifier
    /// (IANA "COSE Algorithms" registry).
    public enum Algorithm: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
        /// ECDSA over P-256 with SHA-256; signatures DER-encoded as WebAuthn requires.
        case es256 = -7
        /// EdDSA; this authenticator uses Ed25519.
        case edDSA = -8
        /// RSASSA-PKCS1-v1_5 with SHA-256, 2048-bit keys.
        case rs256 = -257
        /// ML-DSA-65 (FIPS 204), pure, empty context; AKP COSE key (RFC 9964).
        case mldsa65 = -49
        /// ML-DSA-87 (FIPS 204), pure, empty context; AKP COSE key (RFC 9964).
        case mldsa87 = -50

        public var description: String {
            switch self {
            case .es256: "ES256"
            case .edDSA: "EdDSA"
            case .rs256: "RS256"
            case .mldsa65: "ML-DSA-65"
            case .mldsa87: "ML-DSA-87"
            }
        }

        /// The same identifier as the `WebAuthn` library's type.
        public var coseAlgorithm: COSEAlgorithm { COSEAlgorithm(rawValue) }
    }
}

extension VirtualAuthenticator.Algorithm {
    /// The algorithm a key was made for: keys here are only made from this type (``CredentialKey/generate(_:)``),
    /// so every key's algorithm is one of its cases.
    init(_ algorithm: CredentialKey.Algorithm) {
        guard let own = Self.allCases.first(where: { CredentialKey.Algorithm($0) == algorithm }) else {
            preconditionFailure("a \(algorithm) key that no VirtualAuthenticator.Algorithm makes")
        }
        self = own
    }
}

/// The credential keys are the package's `CredentialKey` (`AuthenticatorSigning`, shared with the keychain's
/// authenticator); these give it this authenticator's algorithm type and errors.
extension CredentialKey {
    static func generate(_ algorithm: VirtualAuthenticator.Algorithm) throws(VirtualAuthenticatorError) -> CredentialKey
    {
        do {
            return try CredentialKey(generating: Algorithm(algorithm))
        } catch {
            let name = algorithm == .rs256 ? "RSA" : "ML-DSA"
            throw VirtualAuthenticatorError(.authenticatorFailure, detail: "\(name) key generation failed")
        }
    }

    /// Rebuilds a key from ``privateKeyBytes`` (the store format).
    init(algorithm: VirtualAuthenticator.Algorithm, privateKeyBytes: [UInt8]) throws(VirtualAuthenticatorError) {
        do {
            try self.init(algorithm: Algorithm(algorithm), privateKeyBytes: privateKeyBytes)
        } catch {
            throw VirtualAuthenticatorError(.invalidStore, detail: "stored \(algorithm) private key is malformed")
        }
    }

    /// The signature over `authenticatorData || SHA-256(clientDataJSON)`, of an assertion (§6.3.3 step 11) or a
    /// packed self attestation (§8.2).
    func assertionSignature(authenticatorData: [UInt8], clientDataJSON: [UInt8]) throws(VirtualAuthenticatorError)
        -> [UInt8]
    {
        do {
            return try signature(authenticatorData: authenticatorData, clientDataJSON: clientDataJSON)
        } catch {
            throw VirtualAuthenticatorError(.authenticatorFailure, detail: "signing failed")
        }
    }
}

extension CredentialKey.Algorithm {
    init(_ algorithm: VirtualAuthenticator.Algorithm) {
        switch algorithm {
        case .es256: self = .es256
        case .edDSA: self = .edDSA
        case .rs256: self = .rs256
        case .mldsa65: self = .mldsa65
        case .mldsa87: self = .mldsa87
        }
    }
}
