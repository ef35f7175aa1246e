import CBOR
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import WebAuthn

// The `tpm` format (W3C WebAuthn §8.3): real captures from the corpus (several TPM vendors), and statements built
// here with a test AIK so that each rule can be broken on its own.

// MARK: - Builder

/// Builds `tpm` statements for ``TestRegistration``'s P-256 credential: an ECC `pubArea`, a `certInfo` certifying
/// it, and an AIK certificate issued by a test CA. Each property can be changed to break one rule.
struct TPMStatementBuilder {
    var registration = TestRegistration()
    let aikKey = P256.Signing.PrivateKey()
    let ca: TestCA

    var ver: CBOR = "2.0"
    var alg = -7
    var magic: UInt32 = 0xFF54_4347
    var type: UInt16 = 0x8017
    /// nil: SHA-256(authenticatorData ‖ clientDataHash).
    var extraData: [UInt8]? = nil
    /// nil: the Name of `pubArea`.
    var attestedName: [UInt8]? = nil
    /// The key `pubArea` describes; nil: the credential key.
    var pubAreaKey: P256.Signing.PublicKey? = nil
    var nameAlg: UInt16 = 0x000B
    var trailingPubAreaBytes: [UInt8] = []
    var includeX5C = true

    // AIK certificate.
    var aikSubject = DistinguishedName()
    var manufacturer = "id:4E544300"
    var sanNames: [(ASN1ObjectIdentifier, String)]? = nil
    var eku: [ASN1ObjectIdentifier] = [TPMAttestationVerifier.aikCertificateEKU]
    var basicConstraints: BasicConstraints? = .notCertificateAuthority
    var aaguidExtension: [UInt8]? = nil
    var version: Certificate.Version = .v3
    var criticalPolicies = true

    init(ca: TestCA) { self.ca = ca }

    /// `TPMT_PUBLIC` for an ECC P-256 signing key (symmetric NULL, scheme ECDSA/SHA-256, kdf NULL).
    var pubArea: [UInt8] {
        let point = Array((pubAreaKey ?? registration.credentialKey.publicKey).x963Representation)
        var bytes: [UInt8] = []
        bytes += be16(0x0023) + be16(nameAlg) + [0x00, 0x04, 0x00, 0x72]  // type ECC, nameAlg, objectAttributes
        bytes += be16(0)  // authPolicy (empty)
        bytes += be16(0x0010)  // symmetric NULL
        bytes += be16(0x0018) + be16(0x000B)  // scheme ECDSA, hashAlg SHA-256
        bytes += be16(0x0003)  // curveID NIST P-256
        bytes += be16(0x0010)  // kdf NULL
        bytes += be16(32) + Array(point[1..<33]) + be16(32) + Array(point[33..<65])
        return bytes + trailingPubAreaBytes
    }

    var name: [UInt8] {
        let area = pubArea
        switch nameAlg {
        case 0x0004: return be16(nameAlg) + Array(Insecure.SHA1.hash(data: area))
        default: return be16(nameAlg) + Array(SHA256.hash(data: area))
        }
    }

    var certInfo: [UInt8] {
        var bytes: [UInt8] = be32(magic) + be16(type)
        bytes += be16(34) + be16(0x000B) + Array(repeating: 0xAB, count: 32)  // qualifiedSigner
        let data = extraData ?? Array(SHA256.hash(data: registration.signedData))
        bytes += be16(UInt16(data.count)) + data
        bytes += Array(repeating: 0x01, count: 17)  // clockInfo
        bytes += Array(repeating: 0x02, count: 8)  // firmwareVersion
        let attested = attestedName ?? name
        bytes += be16(UInt16(attested.count)) + attested
        bytes += be16(34) + be16(0x000B) + Array(repeating: 0xCD, count: 32)  // qualifiedName
        return bytes
    }

    func aikCertificate() throws -> Certificate {
        var extensions: [Certificate.Extension] = []
        if let basicConstraints { extensions.append(try Certificate.Extension(basicConstraints, critical: true)) }
        if !eku.isEmpty {
            extensions.append(
                try Certificate.Extension(
                    try ExtendedKeyUsage(eku.map { ExtendedKeyUsage.Usage(oid: $0) }), critical: false))
        }
        let names =
            sanNames ?? [
                (TPMAttestationVerifier.tpmManufacturer, manufacturer),
                (TPMAttestationVerifier.tpmModel, "NPCT75x"),
                (TPMAttestationVerifier.tpmVersion, "id:00070002"),
            ]
        if !names.isEmpty {
            let rdn = RelativeDistinguishedName(
                names.map { RelativeDistinguishedName.Attribute(type: $0.0, utf8String: $0.1) })
            let san = SubjectAlternativeNames([.directoryName(DistinguishedName([rdn]))])
            extensions.append(try Certificate.Extension(san, critical: true))
        }
        // certificatePolicies { anyPolicy }, critical as in every Windows Hello AIK certificate.
        extensions.append(
            Certificate.Extension(
                oid: TPMAttestationVerifier.certificatePolicies, critical: criticalPolicies,
                value: [0x30, 0x08, 0x30, 0x06, 0x06, 0x04, 0x55, 0x1D, 0x20, 0x00]))
        if let aaguidExtension { extensions.append(TestExtension.aaguid(aaguidExtension)) }
        return try ca.issue(subject: aikSubject, key: aikKey.publicKey, extensions: extensions, version: version)
    }

    func object(signatureOver signed: [UInt8]? = nil) throws -> AttestationObject {
        let info = certInfo
        let signature = Array(try aikKey.signature(for: signed ?? info).derRepresentation)
        var statement: [CBORMapEntry] = [
            CBORMapEntry("ver", ver), CBORMapEntry("alg", CBOR(alg)),
            CBORMapEntry("sig", .byteString(signature)),
            CBORMapEntry("certInfo", .byteString(info)), CBORMapEntry("pubArea", .byteString(pubArea)),
        ]
        if includeX5C {
            statement.append(CBORMapEntry("x5c", .array([.byteString(try der(try aikCertificate()))])))
        }
        return try registration.object(format: "tpm", statement: statement)
    }

    func verify(anchors: [Certificate] = [], trust: AttestationTrust? = nil) async throws(WebAuthnError)
        -> AttestationResult
    {
        let object: AttestationObject
        do { object = try self.object() } catch let error as WebAuthnError { throw error } catch {
            throw WebAuthnError(.custom("fixture"))
        }
        return try await registration.verify(object, trust: trust ?? AttestationTrust(trustAnchors: anchors))
    }
}

func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
func be32(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

/// Runs a `tpm` verification and returns the error (nil when it verified).
func tpmFailure(_ builder: TPMStatementBuilder, trust: AttestationTrust? = nil) async -> WebAuthnError? {
    do {
        _ = try await builder.verify(trust: trust)
        return nil
    } catch {
        return error
    }
}

// MARK: - Rules, one at a time

@Suite struct TPMAttestationTests {
    let ca: TestCA

    init() throws { ca = try TestCA.root("Sesame Test TPM Root") }

    @Test func validStatementIsAttCAAndChainsToTheRoot() async throws {
        let builder = TPMStatementBuilder(ca: ca)
        let result = try await builder.verify(anchors: [ca.certificate])
        #expect(result.format == "tpm" && result.type == .attCA)
        #expect(result.chainVerified && result.trustAnchor == ca.certificate)
        #expect(result.verifiedChain.count == 2)
        // Without anchors: the statement still verifies, the chain is not evaluated.
        let unanchored = try await builder.verify()
        #expect(unanchored.type == .attCA && !unanchored.chainVerified && unanchored.verifiedChain.isEmpty)
    }

    /// The critical certificatePolicies extension is handled only by the TPM chain rules: the same chain with plain
    /// RFC 5280 rules is refused.
    @Test func criticalCertificatePoliciesNeedTheTPMRules() async throws {
        let builder = TPMStatementBuilder(ca: ca)
        let registry = AttestationFormatRegistry.standard.adding(TPMAttestationVerifier(chainRules: .rfc5280))
        let object = try builder.object()
        #expect(
            await failure {
                try await builder.registration.verify(object, anchors: [ca.certificate], registry: registry)
            } == .attestationUntrusted)
    }

    @Test func aikWithoutTheEKUIsRefused() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.eku = [[1, 3, 6, 1, 5, 5, 7, 3, 2]]  // clientAuth
        let error = await tpmFailure(builder)
        #expect(
            error?.code == .attestationCertificateInvalid && error?.step == "§8.3.1 tpm: aikCert EKU",
            "\(String(describing: error))")
        builder.eku = []
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert EKU")
    }

    @Test func pubAreaForAnotherKeyIsRefused() async {
        var builder = TPMStatementBuilder(ca: ca)
        // A correctly named and signed pubArea, but for a key that is not the credential's.
        builder.pubAreaKey = P256.Signing.PrivateKey().publicKey
        let error = await tpmFailure(builder)
        #expect(error?.code == .attestationPublicKeyMismatch && error?.step == "§8.3 tpm: step 2: pubArea")
    }

    @Test func wrongExtraDataIsRefused() async {
        var builder = TPMStatementBuilder(ca: ca)
        var data = Array(SHA256.hash(data: builder.registration.signedData))
        data[0] ^= 1
        builder.extraData = data
        let error = await tpmFailure(builder)
        #expect(error?.code == .attestationNonceMismatch && error?.step == "§8.3 tpm: step 5c: extraData")
        // The SHA-1 digest where alg says SHA-256 is also wrong.
        builder.extraData = Array(Insecure.SHA1.hash(data: builder.registration.signedData))
        #expect((await tpmFailure(builder))?.code == .attestationNonceMismatch)
    }

    @Test func attestedNameMustBeThePubAreaName() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.attestedName = be16(0x000B) + Array(repeating: 0x55, count: 32)
        let error = await tpmFailure(builder)
        #expect(error?.code == .tpmNameMismatch && error?.step == "§8.3 tpm: step 5d: attested.name")
    }

    @Test func magicMustBeTPMGenerated() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.magic = 0xFF54_4348
        #expect((await tpmFailure(builder))?.code == .tpmMagicInvalid)
    }

    @Test func typeMustBeAttestCertify() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.type = 0x8018  // TPM_ST_ATTEST_QUOTE
        let error = await tpmFailure(builder)
        #expect(error?.code == .tpmStructureInvalid && error?.detail.contains("TPM_ST_ATTEST_CERTIFY") == true)
    }

    @Test func bytesAfterPubAreaAreRefused() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.trailingPubAreaBytes = [0]
        let error = await tpmFailure(builder)
        #expect(error?.code == .tpmStructureInvalid && error?.step == "§8.3 tpm: step 1: attStmt")
    }

    @Test func signatureOverOtherBytesIsRefused() async throws {
        let builder = TPMStatementBuilder(ca: ca)
        let object = try builder.object(signatureOver: builder.certInfo + [0])
        #expect(await failure { try await builder.registration.verify(object) } == .attestationSignatureInvalid)
    }

    @Test func aikSubjectMustBeEmpty() async throws {
        var builder = TPMStatementBuilder(ca: ca)
        builder.aikSubject = try DistinguishedName { CommonName("AIK") }
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert subject")
    }

    @Test func aikMustNameItsTPM() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.sanNames = []
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert subjectAltName")
        builder.sanNames = [(TPMAttestationVerifier.tpmManufacturer, "id:4E544300")]
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert subjectAltName")
    }

    @Test func manufacturerMustBeInTheVendorList() async throws {
        var builder = TPMStatementBuilder(ca: ca)
        builder.manufacturer = "id:FFFFF1D0"  // the FIDO conformance tools' test vendor
        let error = await tpmFailure(builder)
        #expect(error?.code == .attestationCertificateInvalid && error?.detail.contains("vendor list") == true)
        #expect(error?.description.contains("FFFFF1D0") == false, "the response's value is not echoed")
        // A relying party that accepts it says so.
        let trust = AttestationTrust(tpmManufacturers: TPMVendors.all.union(["id:FFFFF1D0"]))
        #expect(await tpmFailure(builder, trust: trust) == nil)
    }

    @Test func aikMustNotBeACA() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.basicConstraints = .isCertificateAuthority(maxPathLength: nil)
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert basic constraints")
        builder.basicConstraints = nil
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert basic constraints")
    }

    @Test func aikMustBeVersion3() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.version = .v1
        #expect((await tpmFailure(builder))?.step == "§8.3.1 tpm: aikCert version")
    }

    @Test func aaguidExtensionMustMatch() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.aaguidExtension = builder.registration.aaguid
        #expect(await tpmFailure(builder) == nil)
        builder.aaguidExtension = Array(repeating: 7, count: 16)
        #expect((await tpmFailure(builder))?.code == .attestationAAGUIDMismatch)
    }

    @Test func syntaxRules() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.ver = "1.2"
        #expect((await tpmFailure(builder))?.code == .invalidAttestationStatement)
        builder = TPMStatementBuilder(ca: ca)
        builder.includeX5C = false
        let error = await tpmFailure(builder)
        #expect(error?.code == .invalidAttestationStatement && error?.step == "§8.3 tpm: step 4a: x5c")
    }

    @Test func sha1NameAlgNeedsTheOptIn() async {
        var builder = TPMStatementBuilder(ca: ca)
        builder.nameAlg = 0x0004
        #expect((await tpmFailure(builder))?.code == .sha1SignatureNotAllowed)
        #expect(await tpmFailure(builder, trust: AttestationTrust(allowSHA1Signatures: true)) == nil)
    }
}

// MARK: - Real captures

@Suite struct TPMCorpusTests {
    static let tpmCases: [CorpusCase] = AttestationCorpusTests.cases.filter { $0.format == "tpm" }

    /// Several TPM vendors are represented (from the AIK certificates' subjectAltName).
    @Test(.enabled(if: RealCorpus.sharedDirectory != nil, RealCorpus.absentReason)) func capturesSpanSeveralVendors()
        throws
    {
        var vendors: Set<String> = []
        for testCase in Self.tpmCases {
            let object = try AttestationObject(
                bytes: try Base64URL.decode(testCase.response.response.attestationObject))
            let x5c = try AttestationCertificateChain.parse(object.statement[text: "x5c"], format: "tpm")
            let device = try TPMAttestationVerifier.checkAIKCertificate(x5c[0], manufacturers: TPMVendors.all)
            vendors.insert(TPMVendors.registry[device.manufacturer] ?? "?")
        }
        #expect(Self.tpmCases.count == 14)
        #expect(vendors == ["Intel", "Nuvoton Technology", "STMicroelectronics", "Qualcomm"])
    }

    /// Every corpus TPM statement is RS1: without the SHA-1 opt-in each is refused, and says why.
    @Test(arguments: tpmCases.filter(\.expected.ok))
    func rs1NeedsTheOptIn(_ testCase: CorpusCase) async throws {
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        let clientDataHash = Array(SHA256.hash(data: try Base64URL.decode(testCase.response.response.clientDataJSON)))
        let error = await #expect(throws: WebAuthnError.self) {
            try await AttestationFormatRegistry.standard.verify(
                object, clientDataHash: clientDataHash, trust: AttestationTrust(), now: Date())
        }
        #expect(error?.code == .sha1SignatureNotAllowed)
    }

    /// certInfo and pubArea of every capture parse with exact length accounting: any prefix, and any extra byte,
    /// is refused.
    @Test(arguments: tpmCases)
    func structuresAccountForEveryByte(_ testCase: CorpusCase) throws {
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        let certInfo = try #require(object.statement[text: "certInfo"]?.bytes)
        let pubArea = try #require(object.statement[text: "pubArea"]?.bytes)
        let attest = try TPMSAttest(bytes: certInfo)
        #expect(attest.magic == TPMSAttest.generatedValue && attest.extraData.count == 20)
        let area = try TPMTPublic(bytes: pubArea)
        #expect(area.nameAlg == .sha256)
        for length in 0..<certInfo.count {
            #expect(throws: WebAuthnError.self) { try TPMSAttest(bytes: Array(certInfo.prefix(length))) }
        }
        for length in 0..<pubArea.count {
            #expect(throws: WebAuthnError.self) { try TPMTPublic(bytes: Array(pubArea.prefix(length))) }
        }
        #expect(throws: WebAuthnError.self) { try TPMSAttest(bytes: certInfo + [0]) }
        #expect(throws: WebAuthnError.self) { try TPMTPublic(bytes: pubArea + [0]) }
    }

    /// An RSA pubArea with exponent 0 means 65537 (TPM 2.0 Part 2 §12.2.3.5): the Windows Hello captures use it.
    @Test func rsaExponentZeroIsTheDefault() throws {
        let testCase = try #require(Self.tpmCases.first { $0.name == "yubico-windows-hello-tpm-reg" })
        let object = try AttestationObject(bytes: try Base64URL.decode(testCase.response.response.attestationObject))
        let area = try TPMTPublic(bytes: try #require(object.statement[text: "pubArea"]?.bytes))
        guard case .rsa(let keyBits, let exponent, let modulus) = area.parameters else {
            Issue.record("not an RSA pubArea")
            return
        }
        #expect(keyBits == 2048 && exponent == 65537 && modulus.count == 256)
        let credential = try #require(object.authenticatorData.attestedCredentialData)
        try TPMAttestationVerifier.checkPublicArea(area, matches: credential.publicKey, step: "test")
    }
}
