import Crypto
import Foundation
import SesameBytes
import SwiftASN1
import X509

/// Root certificates for attestation and metadata, by use: the attestation statement format (`fmt`) a root anchors,
/// or ``metadataUse`` for the FIDO Metadata Service BLOB signer.
///
/// ``bundled()`` reads the roots Sesame ships as data files (`Sources/WebAuthn/TrustAnchors/`; `index.json` there
/// names each file's source and license): the Apple WebAuthn root (`apple`), Google's hardware attestation roots,
/// RSA and the P-384 "Key Attestation CA1" (`android-key`), the GlobalSign roots of SafetyNet responses
/// (`android-safetynet`), the Microsoft TPM root (`tpm`) and the FIDO MDS3 root, GlobalSign Root CA R3
/// (`fido-mds`). Nothing is trusted by default: a relying party puts ``byUse`` into
/// ``AttestationTrust/formatAnchors`` (and ``metadataRoots`` into the metadata verification), after adding or
/// replacing what it wants with ``setting(_:for:)`` and ``adding(_:for:)``.
///
/// `packed` and `fido-u2f` have no bundled roots: their roots are each vendor's, which FIDO metadata statements
/// supply (``MetadataIndex``) or the caller lists.
public struct TrustAnchors: Sendable {
    /// Roots by use (`fmt`, or ``metadataUse``).
    public private(set) var byUse: [String: [Certificate]]

    /// The use of the FIDO Metadata Service BLOB signer's roots.
    public static let metadataUse = "fido-mds"

    public init(_ byUse: [String: [Certificate]] = [:]) {
        self.byUse = byUse
    }

    /// The roots for one use.
    public subscript(use: String) -> [Certificate] { byUse[use] ?? [] }

    /// The roots for attestation formats only (everything but ``metadataUse``), for ``AttestationTrust/formatAnchors``.
    public var formatAnchors: [String: [Certificate]] { byUse.filter { $0.key != Self.metadataUse } }

    /// The roots for the FIDO MDS3 BLOB signature chain.
    public var metadataRoots: [Certificate] { self[Self.metadataUse] }

    /// These anchors with `certificates` added for `use`.
    public func adding(_ certificates: [Certificate], for use: String) -> TrustAnchors {
        var copy = self
        for certificate in certificates where !copy[use].contains(certificate) {
            copy.byUse[use, default: []].append(certificate)
        }
        return copy
    }

    /// These anchors with the roots for `use` replaced by `certificates` (empty removes them).
    public func setting(_ certificates: [Certificate], for use: String) -> TrustAnchors {
        var copy = self
        copy.byUse[use] = certificates.isEmpty ? nil : certificates
        return copy
    }

    /// The roots Sesame ships. Each file is checked against the SHA-256 in `index.json`; a missing, changed or
    /// unreadable file is `.invalidConfiguration` (the resource bundle is broken).
    public static func bundled() throws(WebAuthnError) -> TrustAnchors {
        guard let folder = Bundle.module.url(forResource: "TrustAnchors", withExtension: nil) else {
            throw WebAuthnError(.invalidConfiguration, detail: "the bundled TrustAnchors folder is missing")
        }
        return try load(folder: folder)
    }

    /// One entry of the bundled `index.json`.
    public struct IndexEntry: Sendable, Hashable, Decodable {
        public let file: String
        public let use: [String]
        public let subject: String
        public let sha256: String
        public let source: String
        public let license: String
    }

    /// The bundled `index.json`: which file anchors what, and where it came from.
    public static func bundledIndex() throws(WebAuthnError) -> [IndexEntry] {
        guard let folder = Bundle.module.url(forResource: "TrustAnchors", withExtension: nil) else {
            throw WebAuthnError(.invalidConfiguration, detail: "the bundled TrustAnchors folder is missing")
        }
        return try index(in: folder)
    }

    /// Reads a folder laid out like the bundled one: `index.json` (`{"anchors": [{"file", "use", "sha256", ...}]}`)
    /// and one PEM certificate per listed file.
    public static func load(folder: URL) throws(WebAuthnError) -> TrustAnchors {
        var anchors = TrustAnchors()
        for entry in try index(in: folder) {
            let url = folder.appendingPathComponent(entry.file)
            guard entry.file == url.lastPathComponent, let text = try? String(contentsOf: url, encoding: .utf8) else {
                throw WebAuthnError(.invalidConfiguration, detail: "trust anchor file \(entry.file) cannot be read")
            }
            let certificates = try AttestationTrust.certificates(fromPEM: text)
            guard certificates.count == 1, let certificate = certificates.first else {
                throw WebAuthnError(.invalidConfiguration, detail: "\(entry.file) must hold exactly one certificate")
            }
            var serializer = DER.Serializer()
            do { try serializer.serialize(certificate) } catch {
                throw WebAuthnError(.invalidConfiguration, detail: "\(entry.file) does not re-encode")
            }
            let digest = Hex.encode(SHA256.hash(data: serializer.serializedBytes))
            guard digest == entry.sha256.lowercased() else {
                throw WebAuthnError(
                    .invalidConfiguration, detail: "\(entry.file) does not match its SHA-256 in index.json")
            }
            for use in entry.use { anchors = anchors.adding([certificate], for: use) }
        }
        return anchors
    }

    private static func index(in folder: URL) throws(WebAuthnError) -> [IndexEntry] {
        struct Document: Decodable { let anchors: [IndexEntry] }
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("index.json")),
            let document = try? JSONDecoder().decode(Document.self, from: data)
        else {
            throw WebAuthnError(.invalidConfiguration, detail: "the trust anchor index.json is missing or malformed")
        }
        return document.anchors
    }
}
