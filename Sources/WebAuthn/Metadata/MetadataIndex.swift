import Crypto
import Foundation
import SesameBytes
import SwiftASN1
import X509

/// The statements of a verified metadata BLOB, indexed for registration: by AAGUID (FIDO2 authenticators) and by
/// attestation certificate key identifier (U2F authenticators, which have no AAGUID). UAF entries (`aaid`) are kept
/// in ``entries`` but not indexed: WebAuthn never names them.
///
/// The statements' `attestationRootCertificates` become trust anchors for the attestations of that model only
/// (``attestationRoots(aaguid:attestationCertificate:)``), through ``AttestationTrust/metadata``.
public struct MetadataIndex: Sendable {
    public let entries: [MetadataEntry]
    /// The BLOB the index was built from: its number and nextUpdate.
    public let number: Int
    public let nextUpdate: String
    private let byAAGUID: [AAGUID: Int]
    private let byKeyIdentifier: [String: Int]
    private let roots: [[Certificate]]

    /// Builds the index. An entry with a malformed or repeated AAGUID, a key identifier another entry lists, or a
    /// root that is not base64, makes the whole BLOB `.metadataInvalid`: the BLOB was signed as a whole, and a
    /// silently shortened index would hide models. A root that is base64 but not a certificate Sesame can read is left out (``unreadableRootCount``).
    public init(_ blob: MetadataBLOB) throws(WebAuthnError) {
        try self.init(entries: blob.entries, number: blob.number, nextUpdate: blob.nextUpdate)
    }

    public init(entries: [MetadataEntry], number: Int = 0, nextUpdate: String = "") throws(WebAuthnError) {
        var byAAGUID: [AAGUID: Int] = [:]
        var byKeyIdentifier: [String: Int] = [:]
        var roots: [[Certificate]] = []
        var unreadable = 0
        for (index, entry) in entries.enumerated() {
            if let text = entry.aaguid {
                guard let aaguid = AAGUID(uuidString: text) else {
                    throw WebAuthnError(.metadataInvalid, detail: "entry \(index) has a malformed AAGUID")
                }
                guard byAAGUID[aaguid] == nil else {
                    throw WebAuthnError(.metadataInvalid, detail: "entry \(index) repeats an AAGUID")
                }
                byAAGUID[aaguid] = index
            }
            for identifier in entry.attestationCertificateKeyIdentifiers ?? [] {
                let key = identifier.lowercased()
                guard byKeyIdentifier[key] == nil || byKeyIdentifier[key] == index else {
                    throw WebAuthnError(
                        .metadataInvalid, detail: "entry \(index) repeats an attestation certificate key identifier")
                }
                byKeyIdentifier[key] = index
            }
            var certificates: [Certificate] = []
            for encoded in entry.metadataStatement?.attestationRootCertificates ?? [] {
                guard let der = Data(base64Encoded: encoded) else {
                    throw WebAuthnError(
                        .metadataInvalid, detail: "entry \(index) has an attestation root that is not base64")
                }
                // Real BLOBs list some roots that are not strict DER (the production BLOB no 31 has one whose
                // signature AlgorithmIdentifier carries extra bytes). Such a root anchors nothing: leaving it out
                // only narrows trust, and the model keeps its name and status reports.
                if let certificate = try? Certificate(derEncoded: Array(der)) {
                    certificates.append(certificate)
                } else {
                    unreadable += 1
                }
            }
            roots.append(certificates)
        }
        self.entries = entries
        self.number = number
        self.nextUpdate = nextUpdate
        self.byAAGUID = byAAGUID
        self.byKeyIdentifier = byKeyIdentifier
        self.roots = roots
        self.unreadableRootCount = unreadable
    }

    /// How many `attestationRootCertificates` could not be read as X.509 certificates and were left out.
    public let unreadableRootCount: Int

    /// The entry for an AAGUID (never for the all-zero AAGUID, which names no model).
    public func entry(aaguid: AAGUID) -> MetadataEntry? {
        guard aaguid != .zero, let index = byAAGUID[aaguid] else { return nil }
        return entries[index]
    }

    /// The entry whose attestation certificate key identifiers include `certificate`'s.
    public func entry(attestationCertificate certificate: Certificate) -> MetadataEntry? {
        guard let identifier = Self.keyIdentifier(of: certificate), let index = byKeyIdentifier[identifier] else {
            return nil
        }
        return entries[index]
    }

    /// The entry for a registration: by AAGUID when there is a non-zero one, else by the attestation
    /// certificate's key identifier.
    public func entry(aaguid: AAGUID?, attestationCertificate: Certificate?) -> MetadataEntry? {
        if let aaguid, let entry = entry(aaguid: aaguid) { return entry }
        if let attestationCertificate { return entry(attestationCertificate: attestationCertificate) }
        return nil
    }

    /// The trust anchors the matching statement lists.
    public func attestationRoots(aaguid: AAGUID?, attestationCertificate: Certificate?) -> [Certificate] {
        if let aaguid, aaguid != .zero, let index = byAAGUID[aaguid] { return roots[index] }
        if let attestationCertificate, let identifier = Self.keyIdentifier(of: attestationCertificate),
            let index = byKeyIdentifier[identifier]
        {
            return roots[index]
        }
        return []
    }

    /// Lower-case hex SHA-1 of the certificate's subjectPublicKey BIT STRING (RFC 5280 §4.2.1.2, method 1): how
    /// FIDO metadata names U2F attestation certificates.
    public static func keyIdentifier(of certificate: Certificate) -> String? {
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil,
            let key = try? DER.sequence(
                DER.parse(serializer.serializedBytes), identifier: .sequence,
                { nodes in
                    _ = nodes.next()  // algorithm
                    return try ASN1BitString(derEncoded: &nodes)
                })
        else { return nil }
        return Hex.encode(Insecure.SHA1.hash(data: Array(key.bytes)))
    }
}
