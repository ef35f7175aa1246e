import CBOR
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import WebAuthn

// FIDO Metadata Service v3 BLOBs. The specification's example BLOB (and its tampered and DER-signed variants) are
// copied into Vectors/mds (sources in its index.json and in NOTICE); the production and conformance-tool BLOBs (2-3 MB
// each) are read in place from the shared corpus, ../shared/corpus/mds, and the tests that need them say so when
// it is missing. BLOBs with status reports no public BLOB has (REVOKED) are signed here by a test CA.

enum SharedCorpus {
    /// `mds/` of the project's shared corpus (`$SESAME_SHARED_CORPUS`, or `../shared/corpus` beside the
    /// repository), if present.
    static let mds: URL? = {
        guard let corpus = RealCorpus.sharedDirectory?.deletingLastPathComponent() else { return nil }
        let folder = corpus.appendingPathComponent("mds")
        return FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.json").path) ? folder : nil
    }()
    static var available: Bool { mds != nil }
}

/// One verification case of Vectors/mds/index.json.
struct MDSCase: Decodable, Sendable, CustomTestStringConvertible {
    struct Expected: Decodable, Sendable {
        let ok: Bool
        let no: Int?
        let nextUpdate: String?
        let entries: Int?
        let alg: String?
        let error: String?
    }
    let name: String
    let blob: String
    let root: String
    let verificationTime: String
    let enforceNextUpdate: Bool
    let expected: Expected
    var testDescription: String { name }

    /// Copied into Vectors/mds (small) or read from the shared corpus (large).
    var isLocal: Bool { blob.hasPrefix("example/") && (root.hasPrefix("example/") || root.contains("trust-anchors")) }

    static let all: [MDSCase] = {
        struct Index: Decodable { let cases: [MDSCase] }
        return (try? JSONDecoder().decode(Index.self, from: Vectors.data("mds/index.json")).cases) ?? []
    }()

    func text(_ path: String) throws -> String {
        if path.hasPrefix("example/") {
            return String(decoding: try Vectors.data("mds/" + String(path.dropFirst("example/".count))), as: UTF8.self)
        }
        let folder = try #require(SharedCorpus.mds, "the shared corpus (../shared/corpus/mds) is not present")
        return try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
    }

    /// The root: the bundled FIDO root for the corpus's GlobalSign R3 file (the same certificate), else the file.
    func rootCertificates() throws -> [Certificate] {
        if root.hasSuffix("globalsign-root-ca-r3.pem") { return try TrustAnchors.bundled().metadataRoots }
        return try AttestationTrust.certificates(fromPEM: try text(root))
    }

    var time: Date { ISO8601DateFormatter().date(from: verificationTime) ?? .distantPast }

    static let codes: [String: WebAuthnError.Code] = [
        "signature": .metadataSignatureInvalid, "chain": .metadataChainInvalid,
        "certificate-expired": .metadataCertificateExpired, "stale": .metadataStale,
    ]

    func run() async throws {
        let blobText = try text(blob)
        let roots = try rootCertificates()
        if expected.ok {
            let verified = try await MetadataBLOB.verify(
                blobText, roots: roots, time: time, enforceNextUpdate: enforceNextUpdate)
            #expect(verified.number == expected.no)
            if let entries = expected.entries { #expect(verified.entries.count == entries) }
            if let nextUpdate = expected.nextUpdate { #expect(verified.nextUpdate == nextUpdate) }
            if let alg = expected.alg { #expect(verified.algorithm.rawValue == alg) }
            #expect(roots.contains(try #require(verified.chain.last)))
            _ = try MetadataIndex(verified)
        } else {
            let code = try #require(Self.codes[expected.error ?? ""])
            await #expect(throws: WebAuthnError(code)) {
                _ = try await MetadataBLOB.verify(
                    blobText, roots: roots, time: time, enforceNextUpdate: enforceNextUpdate)
            }
        }
    }
}

@Suite struct MetadataBLOBTests {
    @Test func casesArePresent() {
        #expect(MDSCase.all.count == 14)
        #expect(MDSCase.all.filter(\.isLocal).count == 6)
    }

    /// The specification's example: verifies (ignoring nextUpdate, which precedes its signer's notBefore), and the
    /// tampered, stale, wrong-root, expired-signer and DER-signature variants fail, each with its own error.
    @Test(arguments: MDSCase.all.filter(\.isLocal))
    func exampleCases(_ testCase: MDSCase) async throws {
        try await testCase.run()
    }

    /// The production BLOB (RS256, GlobalSign R3, 174 entries) and a conformance-tool BLOB (ES256, 200 entries):
    /// read in place from the shared corpus.
    @Test(
        .enabled(if: SharedCorpus.available, "needs ../shared/corpus/mds (2-3 MB BLOBs read in place, not copied)"),
        arguments: MDSCase.all.filter { !$0.isLocal })
    func largeCorpusCases(_ testCase: MDSCase) async throws {
        try await testCase.run()
    }

    /// Lookups in the production BLOB, against the corpus's facts (statements.json).
    @Test(.enabled(if: SharedCorpus.available, "needs ../shared/corpus/mds"))
    func productionStatements() async throws {
        let testCase = try #require(MDSCase.all.first { $0.name == "production-valid" })
        let blob = try await MetadataBLOB.verify(
            try testCase.text(testCase.blob), roots: try testCase.rootCertificates(), time: testCase.time)
        let index = try MetadataIndex(blob)
        let helloAAGUID = try #require(AAGUID(uuidString: "08987058-cadc-4b81-b6e1-30de50dcbe96"))
        let hello = try #require(index.entry(aaguid: helloAAGUID))
        #expect(hello.name == "Windows Hello Hardware Authenticator")
        let helloRoots = index.attestationRoots(
            aaguid: AAGUID(uuidString: "08987058-cadc-4b81-b6e1-30de50dcbe96"), attestationCertificate: nil)
        #expect(helloRoots == (try TrustAnchors.bundled())["tpm"], "the Microsoft TPM root")
        let safetyNet = try #require(AAGUID(uuidString: "b93fd961-f2e6-462f-b122-82002247de78"))
        #expect(index.attestationRoots(aaguid: safetyNet, attestationCertificate: nil).count == 39)
        #expect(index.entries.allSatisfy { $0.reports(in: AuthenticatorStatus.undesired).isEmpty })
        #expect(hello.certificationLevel == .l1)
    }

    /// The conformance BLOB's 16 entries with undesired statuses.
    @Test(.enabled(if: SharedCorpus.available, "needs ../shared/corpus/mds"))
    func conformanceUndesiredStatuses() async throws {
        let testCase = try #require(MDSCase.all.first { $0.name == "conformance-valid" })
        let blob = try await MetadataBLOB.verify(
            try testCase.text(testCase.blob), roots: try testCase.rootCertificates(), time: testCase.time)
        #expect(blob.entries.filter { !$0.reports(in: AuthenticatorStatus.undesired).isEmpty }.count == 16)
    }

    @Test func nextUpdateDays() {
        #expect(MetadataBLOB.day("2023-10-01") == ISO8601DateFormatter().date(from: "2023-10-01T00:00:00Z"))
        for bad in ["2023-13-01", "2023-02-30", "23-10-01", "2023-10-1", "2023/10/01", ""] {
            #expect(MetadataBLOB.day(bad) == nil, "\(bad)")
        }
    }
}

// MARK: - BLOBs signed here

/// A metadata BLOB signed by a test PKI: root → intermediate → signer.
struct TestMDS {
    let root: TestCA
    let intermediate: TestCA
    let signerKey = P256.Signing.PrivateKey()
    let signer: Certificate

    init(signerValidity: ClosedRange<Date> = TestTime.validity) throws {
        root = try TestCA.root("Sesame Test MDS Root")
        intermediate = try root.intermediate("Sesame Test MDS CA")
        signer = try intermediate.issue(
            subject: try DistinguishedName { CommonName("Sesame Test MDS Signer") }, key: signerKey.publicKey,
            extensions: [try TestExtension.notCA()], validity: signerValidity)
    }

    static func entry(
        aaguid: String? = nil, keyIdentifiers: [String]? = nil, roots: [Certificate] = [], statuses: [String],
        description: String = "Test Authenticator"
    ) throws -> [String: Any] {
        var statement: [String: Any] = [
            "description": description, "authenticatorVersion": 1, "protocolFamily": aaguid == nil ? "u2f" : "fido2",
            "schema": 3, "attestationTypes": ["basic_full"],
            "attestationRootCertificates": try roots.map { Data(try der($0)).base64EncodedString() },
        ]
        var entry: [String: Any] = [
            "statusReports": statuses.map { ["status": $0, "effectiveDate": "2024-01-01"] },
            "timeOfLastStatusChange": "2024-01-01",
        ]
        if let aaguid {
            statement["aaguid"] = aaguid
            entry["aaguid"] = aaguid
        }
        if let keyIdentifiers {
            statement["attestationCertificateKeyIdentifiers"] = keyIdentifiers
            entry["attestationCertificateKeyIdentifiers"] = keyIdentifiers
        }
        entry["metadataStatement"] = statement
        return entry
    }

    func blob(entries: [[String: Any]], no: Int = 7, nextUpdate: String = "2026-12-01") throws -> String {
        let payload: [String: Any] = ["legalHeader": "test", "no": no, "nextUpdate": nextUpdate, "entries": entries]
        let json = try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])
        return try TestJWS.es256(signerKey, certificates: [signer, intermediate.certificate], payload: Array(json))
    }

    func verify(_ text: String, crls: [CertificateRevocationList] = [], time: Date = TestTime.now)
        async throws(WebAuthnError)
        -> MetadataBLOB
    {
        try await MetadataBLOB.verify(text, roots: [root.certificate], crls: crls, time: time)
    }

    /// A CRL issued by `issuer` revoking `serials`, DER (RFC 5280 §5).
    static func crl(
        issuer: TestCA, revoking serials: [Certificate.SerialNumber], thisUpdate: String = "260101000000Z",
        nextUpdate: String = "270101000000Z", critical: Bool = false
    ) throws -> CertificateRevocationList {
        var serializer = DER.Serializer()
        try serializer.serialize(issuer.certificate.subject)
        let name = serializer.serializedBytes
        let algorithm = TestDER.sequence([[0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]])
        func time(_ text: String) -> [UInt8] { TestDER.tlv([0x17], Array(text.utf8)) }
        let revoked = TestDER.sequence(
            serials.map { serial in
                let bytes = Array(serial.bytes.drop { $0 == 0 })
                let content = (bytes.first ?? 0) >= 0x80 || bytes.isEmpty ? [0] + bytes : bytes
                return TestDER.sequence([TestDER.tlv([0x02], content), time("260102000000Z")])
            })
        var members: [[UInt8]] = [TestDER.integer(1), algorithm, name, time(thisUpdate), time(nextUpdate), revoked]
        if critical {
            // crlExtensions [0] { Extension { deltaCRLIndicator (2.5.29.27), critical, OCTET STRING { INTEGER 1 } } }
            members.append(
                TestDER.explicit(
                    0,
                    TestDER.sequence([
                        TestDER.sequence([
                            [0x06, 0x03, 0x55, 0x1D, 0x1B], [0x01, 0x01, 0xFF], TestDER.octets(TestDER.integer(1)),
                        ])
                    ])))
        }
        let tbs = TestDER.sequence(members)
        let signature = Array(try issuer.key.signature(for: tbs).derRepresentation)
        return try CertificateRevocationList(
            derEncoded: TestDER.sequence([tbs, algorithm, TestDER.tlv([0x03], [0x00] + signature)]))
    }
}

@Suite struct SignedHereMetadataTests {
    let mds: TestMDS
    init() throws { mds = try TestMDS() }

    @Test func verifiesAndIndexesByAAGUIDAndKeyIdentifier() async throws {
        let root = try TestCA.root("Vendor Root")
        let attestationKey = P256.Signing.PrivateKey()
        let u2fCertificate = try root.issue(key: attestationKey.publicKey, extensions: [try TestExtension.notCA()])
        let keyIdentifier = try #require(MetadataIndex.keyIdentifier(of: u2fCertificate))
        #expect(keyIdentifier.count == 40)
        let text = try mds.blob(entries: [
            try TestMDS.entry(
                aaguid: "5e5a3e00-1122-4344-8566-778899aabbcc", roots: [root.certificate],
                statuses: ["FIDO_CERTIFIED_L2"]),
            try TestMDS.entry(
                keyIdentifiers: [keyIdentifier.uppercased()], roots: [root.certificate], statuses: ["FIDO_CERTIFIED"]),
        ])
        let blob = try await mds.verify(text)
        #expect(blob.number == 7 && blob.chain.count == 3 && blob.chain.last == mds.root.certificate)
        let index = try MetadataIndex(blob)
        let aaguid = try #require(AAGUID(uuidString: "5e5a3e00-1122-4344-8566-778899aabbcc"))
        let entry = try #require(index.entry(aaguid: aaguid))
        #expect(entry.certificationLevel == .l2)
        #expect(index.entry(attestationCertificate: u2fCertificate)?.certificationLevel == .l1)
        #expect(index.attestationRoots(aaguid: nil, attestationCertificate: u2fCertificate) == [root.certificate])
        #expect(index.entry(aaguid: .zero) == nil)
    }

    @Test func otherRootTamperedAndStaleFailEachWithItsOwnError() async throws {
        let text = try mds.blob(entries: [])
        let other = try TestCA.root("Other Root")
        await #expect(throws: WebAuthnError(.metadataChainInvalid)) {
            _ = try await MetadataBLOB.verify(text, roots: [other.certificate], time: TestTime.now)
        }
        let parts = text.split(separator: ".")
        let tampered =
            parts[0] + "." + Base64URL.encode(Array(#"{"entries":[],"no":8,"nextUpdate":"2026-12-01"}"#.utf8)) + "."
            + parts[2]
        await #expect(throws: WebAuthnError(.metadataSignatureInvalid)) { _ = try await mds.verify(String(tampered)) }
        // nextUpdate 2026-12-01: valid through that day, stale from the next.
        let lastDay = try #require(ISO8601DateFormatter().date(from: "2026-12-01T23:59:59Z"))
        _ = try await mds.verify(text, time: lastDay)
        await #expect(throws: WebAuthnError(.metadataStale)) {
            _ = try await mds.verify(text, time: lastDay.addingTimeInterval(1))
        }
        _ = try await MetadataBLOB.verify(
            text, roots: [mds.root.certificate], time: lastDay.addingTimeInterval(86400), enforceNextUpdate: false)
    }

    /// The serial number: a BLOB no newer than the one held is a rollback, even validly signed and fresh.
    @Test func anOlderOrEqualSerialIsARollback() async throws {
        let text = try mds.blob(entries: [], no: 7)
        for held in [7, 8, 100] {
            await #expect(throws: WebAuthnError(.metadataNotNewer), "held \(held)") {
                _ = try await MetadataBLOB.verify(
                    text, roots: [mds.root.certificate], time: TestTime.now, newerThan: held)
            }
        }
        let blob = try await MetadataBLOB.verify(text, roots: [mds.root.certificate], time: TestTime.now, newerThan: 6)
        #expect(blob.number == 7)
    }

    @Test func expiredSignerFails() async throws {
        let short = try TestMDS(
            signerValidity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 1_750_000_000))
        let text = try short.blob(entries: [])
        await #expect(throws: WebAuthnError(.metadataCertificateExpired)) { _ = try await short.verify(text) }
    }

    @Test func aSignerOutsideTheChainFails() async throws {
        // x5c[1] did not issue x5c[0] (the conformance corpus's bad-chain case, made here).
        let unrelated = try mds.root.intermediate("Unrelated CA")
        let payload = Array(#"{"entries":[],"no":1,"nextUpdate":"2026-12-01"}"#.utf8)
        let text = try TestJWS.es256(
            mds.signerKey, certificates: [mds.signer, unrelated.certificate], payload: payload)
        await #expect(throws: WebAuthnError(.metadataChainInvalid)) { _ = try await mds.verify(text) }
    }

    @Test func crlsWherePresent() async throws {
        let text = try mds.blob(entries: [])
        // The intermediate's CRL lists the signer: revoked.
        let revoking = try TestMDS.crl(issuer: mds.intermediate, revoking: [mds.signer.serialNumber])
        await #expect(throws: WebAuthnError(.metadataCertificateRevoked)) {
            _ = try await mds.verify(text, crls: [revoking])
        }
        // A CRL that lists others: accepted.
        let other = try TestMDS.crl(issuer: mds.intermediate, revoking: [Certificate.SerialNumber()])
        _ = try await mds.verify(text, crls: [other])
        // The root's CRL revoking the intermediate.
        let rootCRL = try TestMDS.crl(issuer: mds.root, revoking: [mds.intermediate.certificate.serialNumber])
        await #expect(throws: WebAuthnError(.metadataCertificateRevoked)) {
            _ = try await mds.verify(text, crls: [rootCRL])
        }
        // A CRL from outside the chain, an outdated one, one with a critical extension: refused.
        let stranger = try TestMDS.crl(issuer: try TestCA.root("Stranger"), revoking: [])
        await #expect(throws: WebAuthnError(.metadataInvalid)) { _ = try await mds.verify(text, crls: [stranger]) }
        let old = try TestMDS.crl(
            issuer: mds.intermediate, revoking: [], thisUpdate: "240101000000Z", nextUpdate: "250101000000Z")
        await #expect(throws: WebAuthnError(.metadataInvalid)) { _ = try await mds.verify(text, crls: [old]) }
        #expect(throws: WebAuthnError(.metadataInvalid)) {
            _ = try TestMDS.crl(issuer: mds.intermediate, revoking: [], critical: true)
        }
    }

    @Test func malformedCRLsAreRefused() throws {
        let good = try TestMDS.crl(issuer: mds.intermediate, revoking: [mds.signer.serialNumber])
        #expect(good.revokes(mds.signer) && good.isSigned(by: mds.intermediate.certificate))
        #expect(!good.isSigned(by: mds.root.certificate))
        for bytes in [[], [0x30, 0x00], [0x30, 0x03, 0x02, 0x01, 0x01], Array(repeating: 0x30, count: 10)] as [[UInt8]]
        {
            #expect(throws: WebAuthnError(.metadataInvalid)) { _ = try CertificateRevocationList(derEncoded: bytes) }
        }
    }

    @Test func payloadMustBeTheDocumentedJSON() async throws {
        for payload in [
            #"{"no":"7","nextUpdate":"2026-12-01","entries":[]}"#, #"{"no":7,"entries":[]}"#,
            #"{"no":7,"nextUpdate":"1 Dec 2026","entries":[]}"#, #"[]"#,
        ] {
            let text = try TestJWS.es256(
                mds.signerKey, certificates: [mds.signer, mds.intermediate.certificate], payload: Array(payload.utf8))
            await #expect(throws: WebAuthnError(.metadataInvalid), "\(payload)") { _ = try await mds.verify(text) }
        }
        // An entry with a malformed AAGUID fails the index, not silently.
        let bad = try mds.blob(entries: [try TestMDS.entry(aaguid: "not-a-uuid", statuses: [])])
        let blob = try await mds.verify(bad)
        #expect(throws: WebAuthnError(.metadataInvalid)) { _ = try MetadataIndex(blob) }
        // So do a repeated AAGUID and a key identifier two entries claim (which roots would apply is unclear).
        let aaguid = "5e5a3e00-1122-4344-8566-778899aabbcc"
        let keyIdentifier = String(repeating: "ab", count: 20)
        for entries in [
            [try TestMDS.entry(aaguid: aaguid, statuses: []), try TestMDS.entry(aaguid: aaguid, statuses: [])],
            [
                try TestMDS.entry(keyIdentifiers: [keyIdentifier], statuses: []),
                try TestMDS.entry(keyIdentifiers: [keyIdentifier.uppercased()], statuses: []),
            ],
        ] {
            let repeated = try await mds.verify(try mds.blob(entries: entries))
            #expect(throws: WebAuthnError(.metadataInvalid)) { _ = try MetadataIndex(repeated) }
        }
    }
}
