import CBOR
import Crypto
import CryptoExtras
import Foundation
import SwiftASN1
import Testing
import X509

@testable import WebAuthn

// Targeted cases for the attestation verifiers, built here with freshly generated keys and certificates: each
// breaks one rule of W3C WebAuthn §8.2 / §8.2.1 / §8.6 / §8.7 / §8.8 or of chain trust.

// MARK: - Fixture builder

/// A certificate authority made for one test.
struct TestCA {
    let key: P256.Signing.PrivateKey
    let certificate: Certificate

    static func root(_ name: String = "Sesame Test Root", validity: ClosedRange<Date> = TestTime.validity) throws
        -> TestCA
    {
        let key = P256.Signing.PrivateKey()
        let dn = try DistinguishedName { CommonName(name) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: dn, subject: dn, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([
                Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true)
            ]),
            issuerPrivateKey: .init(key))
        return TestCA(key: key, certificate: certificate)
    }

    func issue(
        subject: DistinguishedName = TestCA.attestationSubject,
        key: P256.Signing.PublicKey,
        extensions: [Certificate.Extension],
        version: Certificate.Version = .v3,
        validity: ClosedRange<Date> = TestTime.validity
    ) throws -> Certificate {
        try issue(
            subject: subject, publicKey: .init(key), extensions: extensions, version: version, validity: validity)
    }

    func issue(
        subject: DistinguishedName = TestCA.attestationSubject,
        publicKey: Certificate.PublicKey,
        extensions: [Certificate.Extension],
        version: Certificate.Version = .v3,
        validity: ClosedRange<Date> = TestTime.validity
    ) throws -> Certificate {
        try Certificate(
            version: version, serialNumber: .init(), publicKey: publicKey,
            notValidBefore: validity.lowerBound, notValidAfter: validity.upperBound,
            issuer: certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions(extensions),
            issuerPrivateKey: .init(self.key))
    }

    func intermediate(_ name: String) throws -> TestCA {
        let key = P256.Signing.PrivateKey()
        let dn = try DistinguishedName { CommonName(name) }
        let certificate = try issue(
            subject: dn, key: key.publicKey,
            extensions: [
                try Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: 0), critical: true)
            ])
        return TestCA(key: key, certificate: certificate)
    }

    static let attestationSubject: DistinguishedName = {
        // Literal names cannot fail to build; a failure here is a broken test, reported by the tests that use it.
        (try? DistinguishedName {
            CountryName("SE")
            OrganizationName("Sesame Test Vendor")
            OrganizationalUnitName("Authenticator Attestation")
            CommonName("Sesame Test Attestation")
        }) ?? DistinguishedName()
    }()
}

enum TestTime {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
    static let validity = Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 1_900_000_000)
}

enum TestExtension {
    static let aaguidOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]
    static let appleNonceOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 8, 2]

    static func notCA() throws -> Certificate.Extension {
        try Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true)
    }
    static func aaguid(_ bytes: [UInt8], critical: Bool = false) -> Certificate.Extension {
        Certificate.Extension(
            oid: aaguidOID, critical: critical, value: ArraySlice([0x04, UInt8(bytes.count)] + bytes))
    }
    static func appleNonce(_ nonce: [UInt8]) -> Certificate.Extension {
        Certificate.Extension(
            oid: appleNonceOID, critical: false, value: ArraySlice([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce))
    }
}

/// A registration made by a software authenticator with a P-256 credential key.
struct TestRegistration {
    let credentialKey = P256.Signing.PrivateKey()
    let credentialId: [UInt8] = Array(repeating: 0xC1, count: 16)
    let aaguid: [UInt8] = [
        0x5e, 0x5a, 0x3e, 0x00, 0x11, 0x22, 0x43, 0x44, 0x85, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc,
    ]
    let rpIdHash = Array(SHA256.hash(data: Array("sesame.test".utf8)))
    let clientDataHash = Array(SHA256.hash(data: Array(#"{"type":"webauthn.create"}"#.utf8)))

    var coseKey: [UInt8] {
        let point = Array(credentialKey.publicKey.x963Representation)
        return CBOREncoder.encode(
            .map([
                CBORMapEntry(1, 2), CBORMapEntry(3, -7), CBORMapEntry(-1, 1),
                CBORMapEntry(-2, .byteString(Array(point[1..<33]))), CBORMapEntry(-3, .byteString(Array(point[33...]))),
            ]))
    }

    var authenticatorData: [UInt8] {
        rpIdHash + [0x45, 0, 0, 0, 1] + aaguid + [0, UInt8(credentialId.count)] + credentialId + coseKey
    }

    var signedData: [UInt8] { authenticatorData + clientDataHash }

    func object(format: String, statement: [CBORMapEntry]) throws -> AttestationObject {
        let bytes = CBOREncoder.encode(
            .map([
                CBORMapEntry("fmt", .textString(format)),
                CBORMapEntry("attStmt", .map(statement)),
                CBORMapEntry("authData", .byteString(authenticatorData)),
            ]))
        return try AttestationObject(bytes: bytes)
    }

    func packed(alg: Int = -7, signature: [UInt8], x5c: [Certificate]?) throws -> AttestationObject {
        var statement = [CBORMapEntry("alg", CBOR(alg)), CBORMapEntry("sig", .byteString(signature))]
        if let x5c { statement.append(CBORMapEntry("x5c", .array(try x5c.map { .byteString(try der($0)) }))) }
        return try object(format: "packed", statement: statement)
    }

    /// A packed basic attestation signed by `attestationKey`, certified by `leaf`.
    func packedBasic(
        attestationKey: P256.Signing.PrivateKey, chain: [Certificate], alg: Int = -7
    ) throws -> AttestationObject {
        let signature = Array(try attestationKey.signature(for: signedData).derRepresentation)
        return try packed(alg: alg, signature: signature, x5c: chain)
    }

    func verify(
        _ object: AttestationObject, anchors: [Certificate] = [], time: Date? = nil, trust: AttestationTrust? = nil,
        registry: AttestationFormatRegistry = .standard
    ) async throws(WebAuthnError) -> AttestationResult {
        try await registry.verify(
            object, clientDataHash: clientDataHash,
            trust: trust ?? AttestationTrust(trustAnchors: anchors, verificationTime: time), now: TestTime.now)
    }
}

func der(_ certificate: Certificate) throws -> [UInt8] {
    var serializer = DER.Serializer()
    try serializer.serialize(certificate)
    return serializer.serializedBytes
}

/// Runs `body` and returns the code of the `WebAuthnError` it throws: nil if it succeeds, `custom("notWebAuthnError")`
/// if it throws something else (a broken fixture), so that no expectation can pass by accident.
func failure(_ body: () async throws -> AttestationResult) async -> WebAuthnError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let error as WebAuthnError {
        return error.code
    } catch {
        return .custom("notWebAuthnError")
    }
}

// MARK: - packed

@Suite struct AttestationPackedTests {
    let registration = TestRegistration()
    let attestationKey = P256.Signing.PrivateKey()

    func leaf(_ ca: TestCA, extensions: [Certificate.Extension]? = nil, subject: DistinguishedName? = nil) throws
        -> Certificate
    {
        try ca.issue(
            subject: subject ?? TestCA.attestationSubject, key: attestationKey.publicKey,
            extensions: extensions ?? [try TestExtension.notCA(), TestExtension.aaguid(registration.aaguid)])
    }

    @Test func basicWithChainToAnchor() async throws {
        let root = try TestCA.root()
        let intermediate = try root.intermediate("Sesame Test Intermediate")
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(intermediate), intermediate.certificate])
        let result = try await registration.verify(object, anchors: [root.certificate])
        #expect(result.type == .basic)
        #expect(result.chainVerified)
        #expect(result.trustPath.count == 2)
    }

    @Test func basicWithoutAnchorsIsNotChainVerified() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [try leaf(root)])
        let result = try await registration.verify(object)
        #expect(result.type == .basic)
        #expect(!result.chainVerified)
    }

    @Test func missingAAGUIDExtensionIsAccepted() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(root, extensions: [try TestExtension.notCA()])])
        let result = try await registration.verify(object, anchors: [root.certificate])
        #expect(result.type == .basic && result.chainVerified)
    }

    @Test func criticalAAGUIDExtensionIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try leaf(
            root, extensions: [try TestExtension.notCA(), TestExtension.aaguid(registration.aaguid, critical: true)])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }

    @Test func aaguidExtensionMismatchIsRefused() async throws {
        let root = try TestCA.root()
        var other = registration.aaguid
        other[15] ^= 1
        let cert = try leaf(root, extensions: [try TestExtension.notCA(), TestExtension.aaguid(other)])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationAAGUIDMismatch)
    }

    @Test func aaguidExtensionOfWrongLengthIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try leaf(
            root, extensions: [try TestExtension.notCA(), TestExtension.aaguid(Array(registration.aaguid.prefix(15)))])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }

    @Test func caLeafIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try leaf(
            root,
            extensions: [
                try Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true)
            ])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }

    @Test func leafWithoutBasicConstraintsIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try leaf(root, extensions: [TestExtension.aaguid(registration.aaguid)])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }

    @Test(arguments: [
        (
            "OU",
            try DistinguishedName {
                CountryName("SE"); OrganizationName("V"); OrganizationalUnitName("Attestation"); CommonName("C")
            }
        ),
        (
            "no C",
            try DistinguishedName {
                OrganizationName("V"); OrganizationalUnitName("Authenticator Attestation"); CommonName("C")
            }
        ),
        (
            "no CN",
            try DistinguishedName {
                CountryName("SE"); OrganizationName("V"); OrganizationalUnitName("Authenticator Attestation")
            }
        ),
    ])
    func subjectRequirements(_ label: String, _ subject: DistinguishedName) async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(root, subject: subject)])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid, "\(label)")
    }

    @Test func version1CertificateIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try root.issue(key: attestationKey.publicKey, extensions: [], version: .v1)
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }

    @Test(arguments: [-257, -35, -8, -37])
    func algorithmTheCertificateKeyCannotDoIsRefused(_ alg: Int) async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [try leaf(root)], alg: alg)
        #expect(await failure { try await registration.verify(object) } == .attestationAlgorithmMismatch)
    }

    /// An RSA attestation key: RS256 and PS256 verify with it, an ECDSA alg does not.
    @Test func rsaAttestationCertificate() async throws {
        let root = try TestCA.root()
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let cert = try root.issue(
            publicKey: .init(rsaKey.publicKey),
            extensions: [try TestExtension.notCA(), TestExtension.aaguid(registration.aaguid)])
        let data = registration.signedData
        let pkcs1 = Array(
            try rsaKey.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation)
        let pss = Array(try rsaKey.signature(for: SHA256.hash(data: data), padding: .PSS).rawRepresentation)

        let rs256 = try registration.packed(alg: -257, signature: pkcs1, x5c: [cert])
        #expect(try await registration.verify(rs256, anchors: [root.certificate]).chainVerified)
        let ps256 = try registration.packed(alg: -37, signature: pss, x5c: [cert])
        #expect(try await registration.verify(ps256).type == .basic)
        // The PKCS#1 v1.5 signature is not a PSS signature, and the other way round.
        let crossed = try registration.packed(alg: -37, signature: pkcs1, x5c: [cert])
        #expect(await failure { try await registration.verify(crossed) } == .attestationSignatureInvalid)
        let es256 = try registration.packed(alg: -7, signature: pkcs1, x5c: [cert])
        #expect(await failure { try await registration.verify(es256) } == .attestationAlgorithmMismatch)
    }

    @Test func unknownAlgorithmIsRefused() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [try leaf(root)], alg: -9999)
        #expect(await failure { try await registration.verify(object) } == .unsupportedAlgorithm)
    }

    @Test func signatureByAnotherKeyIsRefused() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(attestationKey: P256.Signing.PrivateKey(), chain: [try leaf(root)])
        #expect(await failure { try await registration.verify(object) } == .attestationSignatureInvalid)
    }

    @Test func signatureOverOtherClientDataIsRefused() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [try leaf(root)])
        let error = await failure {
            try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: Array(repeating: 0, count: 32), trust: AttestationTrust(), now: TestTime.now)
        }
        #expect(error == .attestationSignatureInvalid)
    }

    @Test func ecdaaIsRefused() async throws {
        let object = try registration.object(
            format: "packed",
            statement: [
                CBORMapEntry("alg", -7), CBORMapEntry("sig", .byteString([1])),
                CBORMapEntry("ecdaaKeyId", .byteString([1])),
            ])
        #expect(await failure { try await registration.verify(object) } == .invalidAttestationStatement)
    }

    // Self attestation.

    @Test func selfAttestation() async throws {
        let signature = Array(try registration.credentialKey.signature(for: registration.signedData).derRepresentation)
        let result = try await registration.verify(try registration.packed(signature: signature, x5c: nil))
        #expect(result.type == .`self`)
        #expect(result.trustPath.isEmpty && !result.chainVerified)
    }

    @Test func selfAttestationAlgorithmMustMatchCredentialKey() async throws {
        let signature = Array(try registration.credentialKey.signature(for: registration.signedData).derRepresentation)
        let object = try registration.packed(alg: -257, signature: signature, x5c: nil)
        #expect(await failure { try await registration.verify(object) } == .attestationAlgorithmMismatch)
    }

    @Test func selfAttestationSignedByAnotherKeyIsRefused() async throws {
        let signature = Array(try P256.Signing.PrivateKey().signature(for: registration.signedData).derRepresentation)
        let object = try registration.packed(signature: signature, x5c: nil)
        #expect(await failure { try await registration.verify(object) } == .attestationSignatureInvalid)
    }
}

// MARK: - Chain trust

@Suite struct AttestationChainTests {
    let registration = TestRegistration()
    let attestationKey = P256.Signing.PrivateKey()

    func leaf(_ ca: TestCA, extra: [Certificate.Extension] = [], validity: ClosedRange<Date> = TestTime.validity)
        throws -> Certificate
    {
        try ca.issue(
            key: attestationKey.publicKey, extensions: [try TestExtension.notCA()] + extra, validity: validity)
    }

    /// GHSA-6hxq-p678-4hr2 (SimpleWebAuthn): a root the authenticator puts in x5c must not end the path.
    @Test func selfSignedRootInsideX5CIsNotAnAnchor() async throws {
        let trusted = try TestCA.root("Trusted Root")
        let attacker = try TestCA.root("Trusted Root")  // same name, different key
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(attacker), attacker.certificate])
        #expect(
            await failure { try await registration.verify(object, anchors: [trusted.certificate]) }
                == .attestationUntrusted)
    }

    @Test func rootIncludedInX5CStillVerifies() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(root), root.certificate])
        #expect(try await registration.verify(object, anchors: [root.certificate]).chainVerified)
    }

    @Test func unrelatedAnchorIsUntrusted() async throws {
        let root = try TestCA.root()
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [try leaf(root)])
        let other = try TestCA.root("Other Root")
        do {
            _ = try await registration.verify(object, anchors: [other.certificate])
            Issue.record("accepted with an unrelated anchor")
        } catch {
            #expect(error.code == .attestationUntrusted)
            #expect(!error.description.contains("Sesame Test"), "certificate names are not repeated: \(error)")
        }
    }

    @Test func leafPinnedAsAnchorNeedsPolicy() async throws {
        let root = try TestCA.root()
        let cert = try leaf(root)
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(await failure { try await registration.verify(object, anchors: [cert]) } == .attestationUntrusted)
        let pinned = AttestationTrust(trustAnchors: [cert], acceptsLeafAsTrustAnchor: true)
        #expect(try await registration.verify(object, trust: pinned).chainVerified)
        let pinnedLate = AttestationTrust(
            trustAnchors: [cert], verificationTime: TestTime.validity.upperBound + 1, acceptsLeafAsTrustAnchor: true)
        #expect(await failure { try await registration.verify(object, trust: pinnedLate) } == .attestationUntrusted)
    }

    @Test func pinnedLeafWithUnhandledCriticalExtensionIsUntrusted() async throws {
        let root = try TestCA.root()
        let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 99999, 2]
        let cert = try leaf(root, extra: [Certificate.Extension(oid: oid, critical: true, value: [0x05, 0x00])])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        let pinned = AttestationTrust(trustAnchors: [cert], acceptsLeafAsTrustAnchor: true)
        #expect(await failure { try await registration.verify(object, trust: pinned) } == .attestationUntrusted)
        let registry = AttestationFormatRegistry.standard.adding(
            PackedAttestationVerifier(chainRules: AttestationChainRules(handledCriticalExtensions: [oid])))
        #expect(try await registration.verify(object, trust: pinned, registry: registry).chainVerified)
    }

    @Test func verificationTimeIsApplied() async throws {
        let root = try TestCA.root()
        let shortLived = TestTime.now.addingTimeInterval(-86_400)...TestTime.now.addingTimeInterval(86_400)
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(root, validity: shortLived)])
        #expect(try await registration.verify(object, anchors: [root.certificate]).chainVerified)
        let later = TestTime.now.addingTimeInterval(3 * 86_400)
        #expect(
            await failure { try await registration.verify(object, anchors: [root.certificate], time: later) }
                == .attestationUntrusted)
        let earlier = TestTime.now.addingTimeInterval(-3 * 86_400)
        #expect(
            await failure { try await registration.verify(object, anchors: [root.certificate], time: earlier) }
                == .attestationUntrusted)
    }

    @Test func unknownCriticalExtensionNeedsAFormatRule() async throws {
        let root = try TestCA.root()
        let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 99999, 1]
        let cert = try leaf(root, extra: [Certificate.Extension(oid: oid, critical: true, value: [0x05, 0x00])])
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [cert])
        #expect(
            await failure { try await registration.verify(object, anchors: [root.certificate]) }
                == .attestationUntrusted)
        // Without anchors the chain is not evaluated, so the extension is not looked at.
        #expect(try await registration.verify(object).type == .basic)

        let seen = CheckCounter()
        let rules = AttestationChainRules(handledCriticalExtensions: [oid]) { chain in
            seen.record(chain.count)
            return nil
        }
        let registry = AttestationFormatRegistry.standard.adding(PackedAttestationVerifier(chainRules: rules))
        #expect(try await registration.verify(object, anchors: [root.certificate], registry: registry).chainVerified)
        #expect(seen.counts == [2])

        let refusing = AttestationChainRules(handledCriticalExtensions: [oid]) { _ in "policy says no" }
        let strict = AttestationFormatRegistry.standard.adding(PackedAttestationVerifier(chainRules: refusing))
        #expect(
            await failure { try await registration.verify(object, anchors: [root.certificate], registry: strict) }
                == .attestationUntrusted)
    }

    /// Five self-issued CA certificates under one name and key can be chained in any order; with the x5c bound the
    /// search stays small, and ending at no anchor it is refused.
    @Test(.timeLimit(.minutes(1))) func selfIssuedIntermediatesDoNotBlowUpChainBuilding() async throws {
        let loop = try TestCA.root("Loop")
        var intermediates: [Certificate] = []
        for _ in 0..<5 {
            intermediates.append(
                try loop.issue(
                    subject: loop.certificate.subject, key: loop.key.publicKey,
                    extensions: [
                        try Certificate.Extension(
                            BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true)
                    ]))
        }
        let object = try registration.packedBasic(
            attestationKey: attestationKey, chain: [try leaf(loop)] + intermediates)
        let unrelated = try TestCA.root("Unrelated")
        #expect(
            await failure { try await registration.verify(object, anchors: [unrelated.certificate]) }
                == .attestationUntrusted)
    }

    @Test func tooManyCertificatesAreRefused() async throws {
        let root = try TestCA.root()
        let fillers = try (0..<6).map { try TestCA.root("Filler \($0)").certificate }
        let object = try registration.packedBasic(attestationKey: attestationKey, chain: [try leaf(root)] + fillers)
        #expect(await failure { try await registration.verify(object) } == .invalidAttestationStatement)
    }

    @Test func garbageCertificateIsRefused() async throws {
        let object = try registration.object(
            format: "packed",
            statement: [
                CBORMapEntry("alg", -7), CBORMapEntry("sig", .byteString([0x30, 0x00])),
                CBORMapEntry("x5c", [.byteString([0x30, 0x03, 0x02, 0x01, 0x01])]),
            ])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }
}

final class CheckCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Int] = []
    func record(_ count: Int) { lock.withLock { stored.append(count) } }
    var counts: [Int] { lock.withLock { stored } }
}

// MARK: - fido-u2f, none, apple, registry

@Suite struct AttestationFormatTests {
    let registration = TestRegistration()
    let attestationKey = P256.Signing.PrivateKey()

    func u2fSignature(_ key: P256.Signing.PrivateKey) throws -> [UInt8] {
        let point = Array(registration.credentialKey.publicKey.x963Representation)
        let data = [0x00] + registration.rpIdHash + registration.clientDataHash + registration.credentialId + point
        return Array(try key.signature(for: data).derRepresentation)
    }

    func u2f(signature: [UInt8], x5c: [Certificate]) throws -> AttestationObject {
        try registration.object(
            format: "fido-u2f",
            statement: [
                CBORMapEntry("sig", .byteString(signature)),
                CBORMapEntry("x5c", .array(try x5c.map { .byteString(try der($0)) })),
            ])
    }

    @Test func u2fBasic() async throws {
        let root = try TestCA.root()
        let cert = try root.issue(key: attestationKey.publicKey, extensions: [])
        let result = try await registration.verify(
            try u2f(signature: try u2fSignature(attestationKey), x5c: [cert]), anchors: [root.certificate])
        #expect(result.type == .basic && result.chainVerified)
    }

    @Test func u2fWithExtraCertificateIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try root.issue(key: attestationKey.publicKey, extensions: [])
        let object = try u2f(signature: try u2fSignature(attestationKey), x5c: [cert, root.certificate])
        #expect(await failure { try await registration.verify(object) } == .invalidAttestationStatement)
    }

    @Test func u2fWrongSignerIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try root.issue(key: attestationKey.publicKey, extensions: [])
        let object = try u2f(signature: try u2fSignature(P256.Signing.PrivateKey()), x5c: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationSignatureInvalid)
    }

    @Test func u2fNeedsP256CertificateKey() async throws {
        let root = try TestCA.root()
        let p384 = P384.Signing.PrivateKey()
        let cert = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(p384.publicKey),
            notValidBefore: TestTime.validity.lowerBound, notValidAfter: TestTime.validity.upperBound,
            issuer: root.certificate.subject, subject: TestCA.attestationSubject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(),
            issuerPrivateKey: .init(root.key))
        let object = try u2f(signature: try u2fSignature(attestationKey), x5c: [cert])
        #expect(await failure { try await registration.verify(object) } == .attestationCertificateInvalid)
    }

    @Test func noneMustBeEmpty() async throws {
        let result = try await registration.verify(try registration.object(format: "none", statement: []))
        #expect(result.type == .none && result.format == "none")
        let object = try registration.object(format: "none", statement: [CBORMapEntry("sig", .byteString([1]))])
        #expect(await failure { try await registration.verify(object) } == .invalidAttestationStatement)
    }

    @Test func unknownFormat() async throws {
        let object = try registration.object(format: "Packed", statement: [])
        #expect(await failure { try await registration.verify(object) } == .unsupportedAttestationFormat)
        let lenient = AttestationTrust(acceptUnknownFormatsAsNone: true)
        let result = try await registration.verify(object, trust: lenient)
        #expect(result.type == .none && result.format == "Packed" && result.trustPath.isEmpty)
    }

    /// Error details name registered formats (useful to an operator) but never repeat a name the response made up.
    @Test func unknownFormatDetailDoesNotEchoTheResponse() async throws {
        // A registry without tpm: the registered name is shown, a made-up one is not.
        let registry = AttestationFormatRegistry(verifiers: [NoneAttestationVerifier()])
        for (format, shown) in [("tpm", true), ("<script>x", false)] {
            let object = try registration.object(format: format, statement: [])
            do {
                _ = try await registry.verify(
                    object, clientDataHash: registration.clientDataHash, trust: AttestationTrust(), now: TestTime.now)
                Issue.record("\(format) was accepted")
            } catch {
                #expect(error.code == .unsupportedAttestationFormat)
                #expect(error.description.contains(format) == shown, "\(error)")
            }
        }
    }

    @Test func registryLookupAndReplacement() throws {
        #expect(
            AttestationFormatRegistry.standard.formats == [
                "android-key", "android-safetynet", "apple", "compound", "fido-u2f", "none", "packed", "tpm",
            ])
        let registry = AttestationFormatRegistry(verifiers: []).adding(NoneAttestationVerifier())
        #expect(registry.formats == ["none"])
        #expect(registry.verifier(for: "packed") == nil)
    }

    @Test func trustAnchorsFromPEM() throws {
        let first = try TestCA.root("First").certificate
        let second = try TestCA.root("Second").certificate
        let text = try [first, second].map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
        #expect(try AttestationTrust.certificates(fromPEM: text) == [first, second])
        #expect(throws: WebAuthnError.self) { try AttestationTrust.certificates(fromPEM: "") }
        #expect(throws: WebAuthnError.self) { try AttestationTrust.certificates(fromPEM: "not pem") }
        let key = PEMDocument(type: "PUBLIC KEY", derBytes: [0x30, 0x00]).pemString
        #expect(throws: WebAuthnError.self) { try AttestationTrust.certificates(fromPEM: key) }
        let broken = PEMDocument(type: "CERTIFICATE", derBytes: [0x30, 0x00]).pemString
        #expect(throws: WebAuthnError.self) { try AttestationTrust.certificates(fromPEM: broken) }
    }

    @Test func clientDataHashMustBe32Bytes() async throws {
        let object = try registration.object(format: "none", statement: [])
        let error = await failure {
            try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: [1, 2, 3], trust: AttestationTrust(), now: TestTime.now)
        }
        #expect(error == .invalidConfiguration)
    }

    // apple

    func appleCertificate(_ ca: TestCA, key: P256.Signing.PublicKey, nonce: [UInt8]) throws -> Certificate {
        let subject = try DistinguishedName { CommonName("credential") }
        return try ca.issue(
            subject: subject, key: key, extensions: [try TestExtension.notCA(), TestExtension.appleNonce(nonce)])
    }

    var appleNonce: [UInt8] { Array(SHA256.hash(data: registration.signedData)) }

    func apple(_ x5c: [Certificate]) throws -> AttestationObject {
        try registration.object(
            format: "apple",
            statement: [CBORMapEntry("alg", -7), CBORMapEntry("x5c", .array(try x5c.map { .byteString(try der($0)) }))])
    }

    @Test func appleAnonymous() async throws {
        let root = try TestCA.root()
        let cert = try appleCertificate(root, key: registration.credentialKey.publicKey, nonce: appleNonce)
        let result = try await registration.verify(try apple([cert]), anchors: [root.certificate])
        #expect(result.type == .anonCA && result.chainVerified)
    }

    @Test func appleCertificateForAnotherKeyIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try appleCertificate(root, key: P256.Signing.PrivateKey().publicKey, nonce: appleNonce)
        #expect(await failure { try await registration.verify(try apple([cert])) } == .attestationPublicKeyMismatch)
    }

    @Test func appleNonceMismatchIsRefused() async throws {
        let root = try TestCA.root()
        var nonce = appleNonce
        nonce[0] ^= 0x80
        let cert = try appleCertificate(root, key: registration.credentialKey.publicKey, nonce: nonce)
        #expect(await failure { try await registration.verify(try apple([cert])) } == .attestationNonceMismatch)
    }

    @Test func appleWithoutNonceExtensionIsRefused() async throws {
        let root = try TestCA.root()
        let cert = try root.issue(key: registration.credentialKey.publicKey, extensions: [try TestExtension.notCA()])
        #expect(await failure { try await registration.verify(try apple([cert])) } == .attestationCertificateInvalid)
    }
}
