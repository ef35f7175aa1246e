import ArgumentParser
import Foundation
import WebAuthn
import X509

/// `--metadata BLOB [--metadata-root PEM]... [--metadata-crl PEM]... [--metadata-at ISO8601]`, shared by
/// `sesame verify registration` and `sesame inspect`: a FIDO MDS3 BLOB verified before its statements are used.
struct MetadataOptions: ParsableArguments {
    @Option(
        help:
            "A FIDO MDS3 metadata BLOB (JWT): verified, then its statements anchor attestations of their models (and, for verify, feed the policy)."
    )
    var metadata: String?

    @Option(
        name: .customLong("metadata-root"),
        help:
            "A PEM file of roots for the metadata BLOB signer, replacing the bundled FIDO root (GlobalSign Root CA R3)."
    )
    var metadataRoots: [String] = []

    @Option(
        name: .customLong("metadata-crl"), help: "A PEM file of CRLs for the BLOB signer's chain (repeat for several).")
    var metadataCRLs: [String] = []

    @Option(
        name: .customLong("metadata-at"),
        help: "Verification time for the metadata BLOB (its chain and nextUpdate), ISO 8601 (default: now).")
    var metadataAt: String?

    /// The verified BLOB's index, or nil without `--metadata`. Any failure is bad usage (exit 2): the caller's
    /// configuration, not the response, is wrong.
    func load() async throws -> MetadataIndex? {
        guard let path = metadata else { return nil }
        guard let blob = try? String(contentsOfFile: path, encoding: .utf8) else { throw usage("cannot read \(path)") }
        var roots: [Certificate] = []
        if metadataRoots.isEmpty {
            do { roots = try TrustAnchors.bundled().metadataRoots } catch {
                throw usage("the bundled FIDO root cannot be read")
            }
        }
        for file in metadataRoots {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw usage("cannot read \(file)")
            }
            do { roots += try AttestationTrust.certificates(fromPEM: text) } catch {
                throw usage("\(file): \(error.detail)")
            }
        }
        var crls: [CertificateRevocationList] = []
        for file in metadataCRLs {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw usage("cannot read \(file)")
            }
            do { crls += try CertificateRevocationList.lists(fromPEM: text) } catch {
                throw usage("\(file): \(error.detail)")
            }
        }
        var time = Date()
        if let metadataAt {
            guard let parsed = ISO8601DateFormatter().date(from: metadataAt) else {
                throw usage("--metadata-at must be ISO 8601, e.g. 2024-01-31T12:00:00Z")
            }
            time = parsed
        }
        do {
            return try MetadataIndex(try await MetadataBLOB.verify(blob, roots: roots, crls: crls, time: time))
        } catch {
            throw usage(
                "--metadata \(path) does not verify: \(error.code.name)\(error.detail.isEmpty ? "" : " (\(error.detail))")"
            )
        }
    }
}
