import CBOR
import Crypto
import CryptoExtras
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

// Certificate handling shared by the attestation formats: reading `x5c`, checking signatures made with a
// certificate's key, reading the extensions the formats define, and validating a chain against the caller's
// trust anchors.

/// Extra chain rules a format brings to trust evaluation.
///
/// RFC 5280 rules (validity period, basic constraints and path length, name constraints) always apply. A format
/// whose certificates carry a *critical* extension that RFC 5280 processing does not cover (the TPM AIK
/// certificate policies, for example) lists that extension here and enforces it in `check`; a chain with an
/// unlisted critical extension is never accepted.
public struct AttestationChainRules: Sendable {
    /// Critical extensions this format understands and enforces in ``check``.
    public var handledCriticalExtensions: [ASN1ObjectIdentifier]
    /// Called with each candidate chain (leaf first, trust anchor last); returns `nil` to accept it or a reason to
    /// refuse it.
    public var check: @Sendable ([Certificate]) -> String?

    public init(
        handledCriticalExtensions: [ASN1ObjectIdentifier] = [],
        check: @escaping @Sendable ([Certificate]) -> String? = { _ in nil }
    ) {
        self.handledCriticalExtensions = handledCriticalExtensions
        self.check = check
    }

    /// RFC 5280 processing only.
    public static let rfc5280: AttestationChainRules = .init()
}

/// Trust evaluation of an attestation certificate chain (`x5c`).
public enum AttestationCertificateChain {
    /// The most certificates accepted in one `x5c`. Real attestation chains have one to five; the bound keeps
    /// chain building (a search over the intermediates) cheap for hostile input.
    public static let maximumLength = 6

    /// Reads an `x5c` array: one or more DER certificates, leaf first.
    ///
    /// CDDL (W3C WebAuthn §8): `x5c: [ attestnCert: bytes, * (caCert: bytes) ]`.
    public static func parse(
        _ value: CBOR?,
        format: String,
        maximumLength: Int = AttestationCertificateChain.maximumLength
    ) throws(WebAuthnError) -> [Certificate] {
        let step = "§8 \(format): x5c"
        guard let items = value?.array else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step, detail: "x5c must be an array of certificates")
        }
        guard !items.isEmpty else {
            throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "x5c is empty")
        }
        guard items.count <= maximumLength else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step,
                detail: "x5c has \(items.count) certificates; at most \(maximumLength) are accepted")
        }
        var certificates: [Certificate] = []
        certificates.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard let der = item.bytes else {
                throw WebAuthnError(
                    .invalidAttestationStatement, step: step, detail: "x5c[\(index)] is not a byte string")
            }
            let certificate: Certificate
            do {
                certificate = try Certificate(derEncoded: der)
            } catch {
                throw WebAuthnError(
                    .attestationCertificateInvalid, step: step, detail: "x5c[\(index)] is not a DER X.509 certificate")
            }
            if certificates.contains(certificate) {
                throw WebAuthnError(
                    .invalidAttestationStatement, step: step, detail: "x5c[\(index)] repeats an earlier certificate")
            }
            certificates.append(certificate)
        }
        return certificates
    }

    /// Validates `x5c` (leaf first, then intermediates) against `trust`.
    ///
    /// - Returns: `false` when no anchor applies (``anchors(for:format:trust:)`` is empty): the caller asked not to
    ///   evaluate the chain, and the attestation is then only as good as its signature and format rules. `true`
    ///   when a path from the leaf through certificates of `x5c` ends at one of those anchors and meets RFC 5280
    ///   (and `rules`) at `trust.verificationTime ?? now`.
    /// - Throws: `.attestationUntrusted` when anchors apply and no such path exists.
    public static func evaluate(
        _ x5c: [Certificate],
        trust: AttestationTrust,
        now: Date,
        rules: AttestationChainRules = .rfc5280,
        format: String
    ) async throws(WebAuthnError) -> Bool {
        try await validatedPath(x5c, trust: trust, now: now, rules: rules, format: format) != nil
    }

    /// The anchors that apply to a statement of `format` whose attestation certificate is `leaf`: the caller's
    /// anchors for every format, those for `format`, and the roots of the metadata statement for the
    /// registration's AAGUID (or, for U2F authenticators, for `leaf`'s key identifier).
    public static func anchors(for leaf: Certificate, format: String, trust: AttestationTrust) -> [Certificate] {
        var anchors = trust.trustAnchors + (trust.formatAnchors[format] ?? [])
        if let metadata = trust.metadata {
            anchors += metadata.attestationRoots(aaguid: trust.subjectAAGUID, attestationCertificate: leaf)
        }
        var unique: [Certificate] = []
        for anchor in anchors where !unique.contains(anchor) { unique.append(anchor) }
        return unique
    }

    /// Validates `x5c` as ``evaluate(_:trust:now:rules:format:)`` does and returns the validated chain, leaf first
    /// and ending with the trust anchor; nil when no anchor applies.
    ///
    /// Only the applicable anchors end a path: a self-signed certificate inside `x5c` is at most an intermediate,
    /// so an authenticator cannot bring its own root. A leaf that is itself one of the anchors is accepted only
    /// when `trust.acceptsLeafAsTrustAnchor` is set (then its validity period, its critical extensions and `rules`
    /// are checked); otherwise it is removed from the anchors for this evaluation and must chain to another one.
    public static func validatedPath(
        _ x5c: [Certificate],
        trust: AttestationTrust,
        now: Date,
        rules: AttestationChainRules = .rfc5280,
        format: String
    ) async throws(WebAuthnError) -> [Certificate]? {
        let step = "§8 \(format): trust path"
        guard let leaf = x5c.first else {
            throw WebAuthnError(.invalidAttestationStatement, step: step, detail: "x5c is empty")
        }
        let applicable = anchors(for: leaf, format: format, trust: trust)
        if applicable.isEmpty { return nil }
        let time = trust.verificationTime ?? now

        if trust.acceptsLeafAsTrustAnchor && applicable.contains(leaf) {
            guard leaf.notValidBefore <= time && time <= leaf.notValidAfter else {
                throw WebAuthnError(
                    .attestationUntrusted, step: step,
                    detail: "the pinned attestation certificate is not valid at the verification time")
            }
            let handled = Set(RFC5280Policy().verifyingCriticalExtensions + rules.handledCriticalExtensions)
            guard leaf.extensions.allSatisfy({ !$0.critical || handled.contains($0.oid) }) else {
                throw WebAuthnError(
                    .attestationUntrusted, step: step,
                    detail: "the pinned attestation certificate has a critical extension no rule handles")
            }
            if let reason = rules.check([leaf]) {
                throw WebAuthnError(.attestationUntrusted, step: step, detail: reason)
            }
            return [leaf]
        }

        let roots = applicable.filter { $0 != leaf }
        if roots.isEmpty {
            throw WebAuthnError(
                .attestationUntrusted, step: step, detail: "the only anchor is the attestation certificate itself")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            FormatChainPolicy(rules: rules)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(x5c.dropFirst()))
        switch result {
        case .validCertificate(let chain):
            return Array(chain)
        case .couldNotValidate(let failures):
            // The policy reasons quote certificate names from the response; they are not repeated in the error.
            let detail =
                failures.isEmpty
                ? "no path from the attestation certificate to a trust anchor"
                : "\(failures.count) candidate path(s) to a trust anchor failed RFC 5280 or format rules"
            throw WebAuthnError(.attestationUntrusted, step: step, detail: detail)
        }
    }
}

/// Puts ``AttestationChainRules`` into swift-certificates' policy chain.
struct FormatChainPolicy: VerifierPolicy {
    let rules: AttestationChainRules
    var verifyingCriticalExtensions: [ASN1ObjectIdentifier] { rules.handledCriticalExtensions }

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        if let reason = rules.check(Array(chain)) {
            return .failsToMeetPolicy(reason: reason)
        }
        return .meetsPolicy
    }
}

// MARK: - Signatures made with a certificate's key

extension Certificate.PublicKey {
    /// Verifies `signature` over `data` with this key, using the COSE algorithm `alg` from an attestation
    /// statement. The key type must fit the algorithm: ES256/ES384/ES512 need a P-256/P-384/P-521 key, RS* and
    /// PS* an RSA key, EdDSA (-8) and Ed25519 (-19) an Ed25519 key. ECDSA signatures are DER `Ecdsa-Sig-Value`, as
    /// in every attestation format. RS1 (SHA-1) is refused unless `allowSHA1`. (RSA keys under 2048 bits never get
    /// here: certificate parsing refuses them.)
    func verifyAttestationSignature(
        _ signature: [UInt8], over data: [UInt8], algorithm: COSEAlgorithm, allowSHA1: Bool = false, step: String
    ) throws(WebAuthnError) {
        let valid: Bool
        switch algorithm {
        case .rs1:
            guard allowSHA1 else {
                throw WebAuthnError(
                    .sha1SignatureNotAllowed, step: step,
                    detail: "RS1 (SHA-1) attestation signatures need AttestationTrust.allowSHA1Signatures")
            }
            let key = try keyFor(algorithm, _RSA.Signing.PublicKey(self), step: step)
            valid = key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: Insecure.SHA1.hash(data: data),
                padding: .insecurePKCS1v1_5)
        case .es256:
            let key = try keyFor(algorithm, P256.Signing.PublicKey(self), step: step)
            guard let sig = try? P256.Signing.ECDSASignature(derRepresentation: signature) else {
                throw WebAuthnError(
                    .attestationSignatureInvalid, step: step, detail: "sig is not a DER ECDSA signature")
            }
            valid = key.isValidSignature(sig, for: data)
        case .es384:
            let key = try keyFor(algorithm, P384.Signing.PublicKey(self), step: step)
            guard let sig = try? P384.Signing.ECDSASignature(derRepresentation: signature) else {
                throw WebAuthnError(
                    .attestationSignatureInvalid, step: step, detail: "sig is not a DER ECDSA signature")
            }
            valid = key.isValidSignature(sig, for: data)
        case .es512:
            let key = try keyFor(algorithm, P521.Signing.PublicKey(self), step: step)
            guard let sig = try? P521.Signing.ECDSASignature(derRepresentation: signature) else {
                throw WebAuthnError(
                    .attestationSignatureInvalid, step: step, detail: "sig is not a DER ECDSA signature")
            }
            valid = key.isValidSignature(sig, for: data)
        case .edDSA, .ed25519:
            let key = try keyFor(algorithm, Curve25519.Signing.PublicKey(self), step: step)
            valid = key.isValidSignature(signature, for: data)
        case .rs256, .rs384, .rs512, .ps256, .ps384, .ps512:
            let key = try keyFor(algorithm, _RSA.Signing.PublicKey(self), step: step)
            let sig = _RSA.Signing.RSASignature(rawRepresentation: signature)
            let padding: _RSA.Signing.Padding =
                [COSEAlgorithm.ps256, .ps384, .ps512].contains(algorithm) ? .PSS : .insecurePKCS1v1_5
            switch algorithm {
            case .rs256, .ps256: valid = key.isValidSignature(sig, for: SHA256.hash(data: data), padding: padding)
            case .rs384, .ps384: valid = key.isValidSignature(sig, for: SHA384.hash(data: data), padding: padding)
            default: valid = key.isValidSignature(sig, for: SHA512.hash(data: data), padding: padding)
            }
        default:
            throw WebAuthnError(
                .unsupportedAlgorithm, step: step,
                detail: "alg \(algorithm.rawValue) is not supported for attestation signatures")
        }
        guard valid else {
            throw WebAuthnError(.attestationSignatureInvalid, step: step)
        }
    }

    private func keyFor<Key>(_ algorithm: COSEAlgorithm, _ key: Key?, step: String) throws(WebAuthnError) -> Key {
        guard let key else {
            throw WebAuthnError(
                .attestationAlgorithmMismatch, step: step,
                detail: "alg \(algorithm.rawValue) cannot be used with the attestation certificate's \(self) key")
        }
        return key
    }

    /// The key as SubjectPublicKeyInfo DER.
    var subjectPublicKeyInfoDER: [UInt8]? {
        var serializer = DER.Serializer()
        do {
            try serializer.serialize(self)
        } catch {
            return nil
        }
        return serializer.serializedBytes
    }

    /// The uncompressed point `04 ‖ x ‖ y` of an EC key, nil for other key types.
    var uncompressedECPoint: [UInt8]? {
        if let key = P256.Signing.PublicKey(self) { return Array(key.x963Representation) }
        if let key = P384.Signing.PublicKey(self) { return Array(key.x963Representation) }
        if let key = P521.Signing.PublicKey(self) { return Array(key.x963Representation) }
        return nil
    }

    /// Whether this certificate key is the same key as a credential public key.
    func isSameKey(as credentialKey: COSEKey) -> Bool {
        if let (x, y) = credentialKey.ec2Coordinates, let point = uncompressedECPoint {
            return point == [0x04] + x + y
        }
        guard let spki = subjectPublicKeyInfoDER else { return false }
        return spki == credentialKey.subjectPublicKeyInfoDER
    }
}

// MARK: - Extensions defined by attestation formats

enum AttestationExtensions {
    /// id-fido-gen-ce-aaguid (FIDO Metadata / W3C WebAuthn §8.2.1).
    static let aaguid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]
    /// Apple anonymous attestation nonce (W3C WebAuthn §8.8).
    static let appleNonce: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    /// The AAGUID carried by id-fido-gen-ce-aaguid, if the certificate has the extension.
    ///
    /// ASN.1: the extnValue OCTET STRING wraps `OCTET STRING (SIZE(16))`.
    static func aaguid(in certificate: Certificate, step: String) throws(WebAuthnError) -> (
        value: [UInt8], critical: Bool
    )? {
        guard let ext = certificate.extensions[oid: aaguid] else { return nil }
        let inner: ASN1OctetString
        do {
            inner = try ASN1OctetString(derEncoded: ext.value)
        } catch {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "the AAGUID extension is not an OCTET STRING")
        }
        guard inner.bytes.count == 16 else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "the AAGUID extension is not 16 bytes")
        }
        return (Array(inner.bytes), ext.critical)
    }

    /// The nonce in Apple's extension 1.2.840.113635.100.8.2.
    ///
    /// ASN.1: `SEQUENCE { nonce [1] EXPLICIT OCTET STRING }`.
    static func appleNonce(in certificate: Certificate, step: String) throws(WebAuthnError) -> [UInt8] {
        guard let ext = certificate.extensions[oid: appleNonce] else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "credCert has no Apple nonce extension")
        }
        do {
            let root = try DER.parse(ext.value)
            return try DER.sequence(root, identifier: .sequence) { nodes in
                let nonce = try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { node in
                    try ASN1OctetString(derEncoded: node)
                }
                return Array(nonce.bytes)
            }
        } catch {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "the Apple nonce extension is malformed")
        }
    }
}
