import Crypto
import Foundation
import Testing
import X509

@testable import WebAuthn

/// The roots shipped as data files (Sources/WebAuthn/TrustAnchors, sources in its index.json).
@Suite struct TrustAnchorsTests {
    @Test func bundledRootsLoadForEachUse() throws {
        let anchors = try TrustAnchors.bundled()
        #expect(anchors["apple"].count == 1)
        #expect(anchors["android-key"].count == 5)
        #expect(anchors["android-safetynet"].count == 3)
        #expect(anchors["tpm"].count == 1)
        #expect(anchors.metadataRoots.count == 1)
        #expect(anchors["packed"].isEmpty && anchors["fido-u2f"].isEmpty)
        #expect(anchors.formatAnchors[TrustAnchors.metadataUse] == nil)
        // Every bundled anchor is a self-signed CA certificate.
        for certificate in anchors.byUse.values.flatMap({ $0 }) {
            #expect(certificate.subject == certificate.issuer)
            #expect(try certificate.extensions.basicConstraints != .notCertificateAuthority)
        }
        // The P-384 Key Attestation CA1 is among the android-key roots.
        #expect(anchors["android-key"].contains { P384.Signing.PublicKey($0.publicKey) != nil })
    }

    /// Each data file is listed in index.json with a source and a permissive license, and each listed file is there.
    @Test func everyFileIsListedWithItsSource() throws {
        let index = try TrustAnchors.bundledIndex()
        let files = Set(index.map(\.file))
        let sourceFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/WebAuthn/TrustAnchors")
        let present = Set(
            try FileManager.default.contentsOfDirectory(atPath: sourceFolder.path).filter { $0.hasSuffix(".pem") })
        #expect(files == present)
        for entry in index {
            #expect(!entry.source.isEmpty && entry.source.hasSuffix("(\(entry.license))"))
            // Only permissive sources: a root the corpus took from a copyleft peer is named by a permissive one
            // that ships the same bytes.
            #expect(["MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0"].contains(entry.license), "\(entry.file)")
            #expect(!entry.use.isEmpty)
        }
    }

    @Test func callersAddAndReplaceRoots() throws {
        let bundled = try TrustAnchors.bundled()
        let mine = try TestCA.root("My Root").certificate
        let added = bundled.adding([mine], for: "packed")
        #expect(added["packed"] == [mine])
        let replaced = bundled.setting([mine], for: "apple")
        #expect(replaced["apple"] == [mine])
        #expect(replaced.setting([], for: "apple")["apple"].isEmpty)
        // Adding the same root twice keeps one copy.
        #expect(added.adding([mine], for: "packed")["packed"].count == 1)
    }

    /// A changed file is refused, not silently trusted.
    @Test func aTamperedFolderIsRefused() throws {
        let index = try TrustAnchors.bundledIndex()
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("anchors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let other = try TestCA.root("Impostor").certificate.serializeAsPEM().pemString
        let entry = try #require(index.first)
        let json = """
            {"anchors": [{"file": "\(entry.file)", "use": ["apple"], "subject": "x", "sha256": "\(entry.sha256)", \
            "source": "test", "license": "test"}]}
            """
        try Data(json.utf8).write(to: temporary.appendingPathComponent("index.json"))
        try Data(other.utf8).write(to: temporary.appendingPathComponent(entry.file))
        #expect(throws: WebAuthnError(.invalidConfiguration)) { _ = try TrustAnchors.load(folder: temporary) }
    }
}
