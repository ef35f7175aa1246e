import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// A verified FIDO Metadata Service BLOB (FIDO MDS v3.0 §3.1.6): a compact JWS (``CompactJWS``) whose payload is
///
/// ```
/// MetadataBLOBPayload = { ? legalHeader: string, no: int, nextUpdate: "YYYY-MM-DD", entries: [MetadataEntry] }
/// ```
/// signed by a certificate (`x5c[0]`) that chains, through the rest of `x5c`, to the FIDO metadata root.
///
/// ``verify(_:roots:crls:time:enforceNextUpdate:newerThan:)`` checks, in this order, and fails with the first that does not hold
/// (each with its own code):
/// 1. the JWS is well formed and its signature verifies with `x5c[0]` (`.invalidJWS`, `.metadataSignatureInvalid`);
/// 2. `x5c[i]` is issued by `x5c[i+1]` and the last one by, or equal to, one of `roots`, and the whole path meets
///    RFC 5280 (`.metadataChainInvalid`);
/// 3. every certificate of the path, root included, is valid at `time` (`.metadataCertificateExpired`);
/// 4. no certificate of `x5c` is listed in a CRL given by the caller and signed by its issuer; each CRL given must
///    be signed by a certificate of the path and current at `time` (`.metadataCertificateRevoked`,
///    `.metadataInvalid`);
/// 5. `time` is not after the end (UTC) of the `nextUpdate` day, unless `enforceNextUpdate` is off
///    (`.metadataStale`);
/// 6. the payload is the documented JSON (`.metadataInvalid`);
/// 7. its serial number `no` is greater than `newerThan`, the number of the BLOB the caller already holds
///    (`.metadataNotNewer`): an older BLOB, validly signed and still inside its `nextUpdate`, could otherwise bring
///    back a model whose later status report revoked it.
public struct MetadataBLOB: Sendable {
    /// The BLOB's serial number; a newer BLOB has a larger one.
    public let number: Int
    /// `nextUpdate` as published (`YYYY-MM-DD`).
    public let nextUpdate: String
    public let legalHeader: String?
    public let entries: [MetadataEntry]
    /// The signer's chain: `x5c`, then the root it reached.
    public let chain: [Certificate]
    public let algorithm: CompactJWS.Algorithm

    /// The largest BLOB accepted (the production BLOB is about 3 MB).
    public static let maximumLength = 32 << 20

    public static func verify(
        _ text: some StringProtocol, roots: [Certificate], crls: [CertificateRevocationList] = [], time: Date,
        enforceNextUpdate: Bool = true, newerThan: Int? = nil
    ) async throws(WebAuthnError) -> MetadataBLOB {
        // 1. Signature.
        let jws = try CompactJWS(text, maximumLength: maximumLength)
        guard jws.signatureIsValid else {
            throw WebAuthnError(.metadataSignatureInvalid, step: "MDS3 BLOB: signature")
        }

        // 2. Chain: each certificate issued by the next, the last by (or equal to) a root.
        let x5c: [Certificate]
        do { x5c = try jws.chain() } catch {
            throw WebAuthnError(.metadataChainInvalid, step: "MDS3 BLOB: chain", detail: error.detail)
        }
        for index in 0..<(x5c.count - 1) where !issued(x5c[index], by: x5c[index + 1]) {
            throw WebAuthnError(
                .metadataChainInvalid, step: "MDS3 BLOB: chain",
                detail: "x5c[\(index)] is not issued by x5c[\(index + 1)]")
        }
        let last = x5c[x5c.count - 1]
        guard let root = roots.first(where: { $0 == last }) ?? roots.first(where: { issued(last, by: $0) }) else {
            throw WebAuthnError(
                .metadataChainInvalid, step: "MDS3 BLOB: chain", detail: "x5c does not lead to a metadata root")
        }
        let chain = root == last ? x5c : x5c + [root]
        let path = Array(chain.dropLast())

        // 3. Validity of every certificate at the verification time.
        for certificate in chain where !(certificate.notValidBefore <= time && time <= certificate.notValidAfter) {
            throw WebAuthnError(
                .metadataCertificateExpired, step: "MDS3 BLOB: certificate validity",
                detail: "a certificate of the signer's chain is not valid at the verification time")
        }
        // RFC 5280 over the same path (CA flags, key usage, path length, critical extensions).
        if !path.isEmpty {
            var verifier = Verifier(rootCertificates: CertificateStore([root])) {
                RFC5280Policy(fixedExpiryValidationTime: time)
            }
            let result = await verifier.validate(leaf: path[0], intermediates: CertificateStore(path.dropFirst()))
            guard case .validCertificate = result else {
                throw WebAuthnError(
                    .metadataChainInvalid, step: "MDS3 BLOB: chain", detail: "the signer's chain does not meet RFC 5280"
                )
            }
        }

        // 4. Revocation, where the caller supplied CRLs.
        for crl in crls {
            guard chain.contains(where: { crl.isSigned(by: $0) }) else {
                throw WebAuthnError(
                    .metadataInvalid, step: "MDS3 BLOB: CRL",
                    detail: "a CRL is not signed by a certificate of the chain")
            }
            guard crl.thisUpdate <= time, crl.nextUpdate.map({ time <= $0 }) ?? true else {
                throw WebAuthnError(.metadataInvalid, step: "MDS3 BLOB: CRL", detail: "a CRL is not current")
            }
            for (index, certificate) in path.enumerated() {
                let issuer = chain[index + 1]
                if crl.revokes(certificate) && crl.isSigned(by: issuer) {
                    throw WebAuthnError(
                        .metadataCertificateRevoked, step: "MDS3 BLOB: CRL",
                        detail: "x5c[\(index)] is revoked by its issuer's CRL")
                }
            }
        }

        // 6 (read before 5, which needs nextUpdate). The payload.
        let payload: MetadataBLOBPayload
        do { payload = try MetadataBLOBPayload(json: jws.payload) } catch { throw error.at("MDS3 BLOB: payload") }

        // 5. Freshness.
        if enforceNextUpdate, time >= payload.nextUpdateDay.addingTimeInterval(86_400) {
            throw WebAuthnError(
                .metadataStale, step: "MDS3 BLOB: nextUpdate",
                detail: "the BLOB's nextUpdate \(payload.nextUpdate) has passed; import a newer BLOB")
        }
        // 7. Serial number.
        if let newerThan, payload.number <= newerThan {
            throw WebAuthnError(
                .metadataNotNewer, step: "MDS3 BLOB: no",
                detail: "BLOB number \(payload.number) is not newer than the one held (\(newerThan))")
        }
        return MetadataBLOB(
            number: payload.number, nextUpdate: payload.nextUpdate, legalHeader: payload.legalHeader,
            entries: payload.entries, chain: chain, algorithm: jws.algorithm)
    }

    private init(
        number: Int, nextUpdate: String, legalHeader: String?, entries: [MetadataEntry], chain: [Certificate],
        algorithm: CompactJWS.Algorithm
    ) {
        self.number = number
        self.nextUpdate = nextUpdate
        self.legalHeader = legalHeader
        self.entries = entries
        self.chain = chain
        self.algorithm = algorithm
    }

    /// Whether `issuer` issued `certificate`: names match and `issuer`'s key verifies the signature.
    static func issued(_ certificate: Certificate, by issuer: Certificate) -> Bool {
        certificate.issuer == issuer.subject
            && issuer.publicKey.isValidSignature(certificate.signature, for: certificate)
    }

    /// Midnight UTC of a `YYYY-MM-DD` date.
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components),
            calendar.dateComponents([.year, .month, .day], from: date) == components
        else { return nil }
        return date
    }
}

/// The payload of a metadata BLOB (FIDO MDS v3.0 §3.1.6), read from its JSON before any of it is trusted:
///
/// ```
/// MetadataBLOBPayload = { ? legalHeader: string, no: int, nextUpdate: "YYYY-MM-DD", entries: [MetadataEntry] }
/// ```
/// ``MetadataBLOB/verify(_:roots:crls:time:enforceNextUpdate:newerThan:)`` reads it only after the signature and chain have
/// been checked; it is public so that it can be fuzzed on its own (`FuzzTesting`, target `FuzzMetadata`).
public struct MetadataBLOBPayload: Sendable {
    public let legalHeader: String?
    public let number: Int
    public let nextUpdate: String
    /// Midnight UTC of `nextUpdate`.
    public let nextUpdateDay: Date
    public let entries: [MetadataEntry]

    private struct Document: Decodable {
        let legalHeader: String?
        let no: Int
        let nextUpdate: String
        let entries: [MetadataEntry]
    }

    /// Errors are `.metadataInvalid`; they name the rule, never the input.
    public init(json: [UInt8]) throws(WebAuthnError) {
        guard json.count <= MetadataBLOB.maximumLength else {
            throw WebAuthnError(
                .metadataInvalid, detail: "the payload is larger than \(MetadataBLOB.maximumLength) bytes")
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(json))
        } catch {
            throw WebAuthnError(.metadataInvalid, detail: "the payload is not a MetadataBLOBPayload")
        }
        guard let day = MetadataBLOB.day(document.nextUpdate) else {
            throw WebAuthnError(.metadataInvalid, detail: "nextUpdate is not YYYY-MM-DD")
        }
        legalHeader = document.legalHeader
        number = document.no
        nextUpdate = document.nextUpdate
        nextUpdateDay = day
        entries = document.entries
    }
}
