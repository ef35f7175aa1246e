import Foundation
import SwiftASN1
import X509

/// An X.509 certificate revocation list (RFC 5280 §5), read strictly from DER, for checking the FIDO metadata BLOB
/// signer's chain against CRLs the operator supplies with the BLOB (Sesame never fetches one).
///
/// ```
/// CertificateList  ::= SEQUENCE { tbsCertList TBSCertList, signatureAlgorithm AlgorithmIdentifier,
///                                 signatureValue BIT STRING }
/// TBSCertList      ::= SEQUENCE { version INTEGER OPTIONAL (v2 = 1), signature AlgorithmIdentifier, issuer Name,
///                                 thisUpdate Time, nextUpdate Time OPTIONAL,
///                                 revokedCertificates SEQUENCE OF SEQUENCE {
///                                     userCertificate INTEGER, revocationDate Time, crlEntryExtensions Extensions OPTIONAL
///                                 } OPTIONAL,
///                                 crlExtensions [0] EXPLICIT Extensions OPTIONAL }
/// Time             ::= CHOICE { utcTime UTCTime, generalTime GeneralizedTime }
/// ```
/// Signature algorithms: ECDSA with SHA-256/384/512, RSA PKCS #1 v1.5 with SHA-256/384/512. A critical extension
/// (of the list or of an entry) is refused: this reader does not implement delta CRLs or indirect CRLs.
public struct CertificateRevocationList: Sendable, Hashable {
    public let issuer: DistinguishedName
    public let thisUpdate: Date
    public let nextUpdate: Date?
    /// Serial numbers (big-endian magnitude, without leading zero bytes) of the revoked certificates.
    public let revokedSerialNumbers: Set<[UInt8]>
    let tbsBytes: [UInt8]
    let signatureAlgorithm: Certificate.SignatureAlgorithm
    let signature: [UInt8]

    /// The largest CRL accepted.
    public static let maximumLength = 1 << 20

    public init(derEncoded bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= Self.maximumLength else {
            throw WebAuthnError(.metadataInvalid, detail: "the CRL is larger than \(Self.maximumLength) bytes")
        }
        do {
            let root = try DER.parse(bytes)
            self = try DER.sequence(root, identifier: .sequence) { nodes in
                guard let tbsNode = nodes.next() else { throw Self.invalid("no tbsCertList") }
                let outerAlgorithm = try Self.algorithm(&nodes)
                let signatureBits = try ASN1BitString(derEncoded: &nodes)
                guard signatureBits.paddingBits == 0 else { throw Self.invalid("signature has unused bits") }
                var serializer = DER.Serializer()
                serializer.serialize(tbsNode)
                let tbs = serializer.serializedBytes
                return try DER.sequence(tbsNode, identifier: .sequence) { tbsNodes in
                    var next = tbsNodes.next()
                    if let node = next, node.identifier == .integer {
                        guard try Int(derEncoded: node) == 1 else { throw Self.invalid("version is not v2") }
                        next = tbsNodes.next()
                    }
                    guard let signatureNode = next else { throw Self.invalid("no signature algorithm") }
                    let innerOID = try Self.algorithmOID(signatureNode)
                    guard innerOID == outerAlgorithm.oid else {
                        throw Self.invalid("the two signature algorithms differ")
                    }
                    guard let issuerNode = tbsNodes.next() else { throw Self.invalid("no issuer") }
                    let issuer = try DistinguishedName(derEncoded: issuerNode)
                    guard let thisUpdateNode = tbsNodes.next() else { throw Self.invalid("no thisUpdate") }
                    let thisUpdate = try Self.time(thisUpdateNode)
                    var nextUpdate: Date?
                    var revoked: Set<[UInt8]> = []
                    while let node = tbsNodes.next() {
                        switch node.identifier {
                        case .utcTime, .generalizedTime:
                            guard nextUpdate == nil, revoked.isEmpty else { throw Self.invalid("misplaced time") }
                            nextUpdate = try Self.time(node)
                        case .sequence:
                            guard revoked.isEmpty else { throw Self.invalid("two revokedCertificates lists") }
                            revoked = try Self.revokedCertificates(node)
                        case ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific):
                            try Self.checkExtensions(node, explicit: true)
                            guard tbsNodes.next() == nil else { throw Self.invalid("data after crlExtensions") }
                        default:
                            throw Self.invalid("unexpected element")
                        }
                    }
                    return CertificateRevocationList(
                        issuer: issuer, thisUpdate: thisUpdate, nextUpdate: nextUpdate, revokedSerialNumbers: revoked,
                        tbsBytes: tbs, signatureAlgorithm: outerAlgorithm.algorithm,
                        signature: Array(signatureBits.bytes))
                }
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw WebAuthnError(.metadataInvalid, detail: "the CRL is not DER (RFC 5280 §5)")
        }
    }

    private init(
        issuer: DistinguishedName, thisUpdate: Date, nextUpdate: Date?, revokedSerialNumbers: Set<[UInt8]>,
        tbsBytes: [UInt8], signatureAlgorithm: Certificate.SignatureAlgorithm, signature: [UInt8]
    ) {
        self.issuer = issuer
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
        self.revokedSerialNumbers = revokedSerialNumbers
        self.tbsBytes = tbsBytes
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }

    /// Parses PEM text holding one or more `X509 CRL` blocks.
    public static func lists(fromPEM text: String) throws(WebAuthnError) -> [CertificateRevocationList] {
        let documents: [PEMDocument]
        do { documents = try PEMDocument.parseMultiple(pemString: text) } catch {
            throw WebAuthnError(.metadataInvalid, detail: "the CRL file is not PEM")
        }
        var lists: [CertificateRevocationList] = []
        for document in documents {
            guard document.discriminator == "X509 CRL" else {
                throw WebAuthnError(.metadataInvalid, detail: "a PEM block is not an X509 CRL")
            }
            lists.append(try CertificateRevocationList(derEncoded: document.derBytes))
        }
        guard !lists.isEmpty else { throw WebAuthnError(.metadataInvalid, detail: "no CRL in the PEM text") }
        return lists
    }

    /// Whether `issuer`'s key signed this CRL.
    public func isSigned(by issuer: Certificate) -> Bool {
        issuer.subject == self.issuer
            && issuer.publicKey.isValidSignature(signature, for: tbsBytes, signatureAlgorithm: signatureAlgorithm)
    }

    /// Whether this CRL lists `certificate` (same issuer name, same serial number).
    public func revokes(_ certificate: Certificate) -> Bool {
        certificate.issuer == issuer && revokedSerialNumbers.contains(Self.magnitude(certificate.serialNumber.bytes))
    }

    /// A serial number's bytes without leading zero bytes, so that the INTEGER content (which has a leading zero
    /// when the high bit is set) and swift-certificates' serial bytes compare equal.
    static func magnitude(_ bytes: ArraySlice<UInt8>) -> [UInt8] { Array(bytes.drop { $0 == 0 }) }

    // MARK: - Reading

    private static func invalid(_ detail: String) -> WebAuthnError {
        WebAuthnError(.metadataInvalid, detail: "CRL: \(detail)")
    }

    private static let algorithms: [ASN1ObjectIdentifier: Certificate.SignatureAlgorithm] = [
        [1, 2, 840, 10045, 4, 3, 2]: .ecdsaWithSHA256,
        [1, 2, 840, 10045, 4, 3, 3]: .ecdsaWithSHA384,
        [1, 2, 840, 10045, 4, 3, 4]: .ecdsaWithSHA512,
        [1, 2, 840, 113549, 1, 1, 11]: .sha256WithRSAEncryption,
        [1, 2, 840, 113549, 1, 1, 12]: .sha384WithRSAEncryption,
        [1, 2, 840, 113549, 1, 1, 13]: .sha512WithRSAEncryption,
    ]

    private static func algorithmOID(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
        try DER.sequence(node, identifier: .sequence) { nodes in
            let oid = try ASN1ObjectIdentifier(derEncoded: &nodes)
            // RSA algorithms carry an explicit NULL; ECDSA ones nothing.
            if let parameters = nodes.next() { _ = try ASN1Null(derEncoded: parameters) }
            return oid
        }
    }

    private static func algorithm(_ nodes: inout ASN1NodeCollection.Iterator) throws -> (
        oid: ASN1ObjectIdentifier, algorithm: Certificate.SignatureAlgorithm
    ) {
        guard let node = nodes.next() else { throw invalid("no signature algorithm") }
        let oid = try algorithmOID(node)
        guard let algorithm = algorithms[oid] else { throw invalid("unsupported signature algorithm") }
        return (oid, algorithm)
    }

    private static func time(_ node: ASN1Node) throws -> Date {
        switch node.identifier {
        case .utcTime:
            let t = try UTCTime(derEncoded: node)
            return try date(t.year, t.month, t.day, t.hours, t.minutes, t.seconds)
        case .generalizedTime:
            let t = try GeneralizedTime(derEncoded: node)
            return try date(t.year, t.month, t.day, t.hours, t.minutes, t.seconds)
        default:
            throw invalid("a time is neither UTCTime nor GeneralizedTime")
        }
    }

    private static func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) throws
        -> Date
    {
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        (components.hour, components.minute, components.second) = (hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard let date = calendar.date(from: components) else { throw invalid("a time is out of range") }
        return date
    }

    private static func revokedCertificates(_ node: ASN1Node) throws -> Set<[UInt8]> {
        var serials: Set<[UInt8]> = []
        try DER.sequence(node, identifier: .sequence) { entries in
            while let entry = entries.next() {
                try DER.sequence(entry, identifier: .sequence) { fields in
                    let serial = try ArraySlice<UInt8>(derEncoded: &fields)
                    guard let dateNode = fields.next() else { throw invalid("an entry has no revocationDate") }
                    _ = try time(dateNode)
                    if let extensions = fields.next() { try checkExtensions(extensions, explicit: false) }
                    serials.insert(Self.magnitude(serial))
                }
            }
        }
        return serials
    }

    /// Extensions ::= SEQUENCE OF Extension; refuses a critical one.
    private static func checkExtensions(_ node: ASN1Node, explicit: Bool) throws {
        let body: ASN1Node
        if explicit {
            body = try DER.explicitlyTagged(node, tagNumber: 0, tagClass: .contextSpecific) { $0 }
        } else {
            body = node
        }
        try DER.sequence(body, identifier: .sequence) { extensions in
            while let node = extensions.next() {
                let ext = try Certificate.Extension(derEncoded: node)
                guard !ext.critical else { throw invalid("a critical extension this reader does not implement") }
            }
        }
    }
}
