import CBOR
import Crypto
import CryptoExtras
import Testing

@testable import WebAuthn

struct AuthenticatorDataTests {
    static let rpIdHash = Array(SHA256.hash(data: Array("example.com".utf8)))
    static let p256 = P256.Signing.PrivateKey()

    static func coseP256(_ key: P256.Signing.PublicKey = p256.publicKey, alg: Int = -7, crv: Int = 1) -> [UInt8] {
        let point = Array(key.x963Representation)
        return CBOREncoder.encode(
            .map([
                CBORMapEntry(1, 2), CBORMapEntry(3, CBOR(alg)), CBORMapEntry(-1, CBOR(crv)),
                CBORMapEntry(-2, .byteString(Array(point[1...32]))), CBORMapEntry(-3, .byteString(Array(point[33...]))),
            ]))
    }

    static func authData(
        flags: UInt8, count: UInt32 = 7, credentialId: [UInt8]? = nil, key: [UInt8]? = nil,
        extensions: [UInt8] = [], trailing: [UInt8] = []
    ) -> [UInt8] {
        var out = rpIdHash + [flags] + withUnsafeBytes(of: count.bigEndian, Array.init)
        if let id = credentialId {
            out += [UInt8](repeating: 0xab, count: 16) + [UInt8(id.count >> 8), UInt8(id.count & 0xff)] + id
            out += key ?? coseP256()
        }
        return out + extensions + trailing
    }

    @Test func parsesAssertionData() throws {
        let data = try AuthenticatorData(bytes: Self.authData(flags: 0x05 | 0x08 | 0x10, count: 0x0102_0304))
        #expect(data.rpIdHash == Self.rpIdHash)
        #expect(data.flags == [.userPresent, .userVerified, .backupEligible, .backedUp])
        #expect(data.signCount == 0x0102_0304)
        #expect(data.attestedCredentialData == nil)
        #expect(data.extensions == nil)
    }

    @Test func parsesAttestedCredentialDataAndExtensions() throws {
        let ext = CBOREncoder.encode(.map([CBORMapEntry("credProtect", 2)]))
        let bytes = Self.authData(flags: 0x41 | 0x80, credentialId: [1, 2, 3, 4], extensions: ext)
        let data = try AuthenticatorData(bytes: bytes)
        let attested = try #require(data.attestedCredentialData)
        #expect(attested.credentialId == [1, 2, 3, 4])
        #expect(attested.aaguid.uuidString == "abababab-abab-abab-abab-abababababab")
        #expect(attested.publicKey.algorithm == .es256)
        #expect(attested.publicKeyBytes == Self.coseP256())
        #expect(data.extensions?[text: "credProtect"]?.int == 2)
    }

    @Test func refusesShortData() {
        #expect(throws: WebAuthnError(.authenticatorDataTooShort)) {
            try AuthenticatorData(bytes: Array(Self.authData(flags: 1).dropLast()))
        }
        #expect(throws: WebAuthnError(.authenticatorDataTooShort)) {
            try AuthenticatorData(bytes: Self.authData(flags: 0x41) + [0, 1])
        }
    }

    @Test func refusesTrailingBytes() {
        #expect(throws: WebAuthnError(.authenticatorDataLengthMismatch)) {
            try AuthenticatorData(bytes: Self.authData(flags: 1, trailing: [0]))
        }
        #expect(throws: WebAuthnError(.authenticatorDataLengthMismatch)) {
            try AuthenticatorData(bytes: Self.authData(flags: 0x41, credentialId: [9], trailing: [0xa0]))
        }
    }

    @Test func refusesMissingExtensions() {
        #expect(throws: WebAuthnError(.extensionDataMissing)) {
            try AuthenticatorData(bytes: Self.authData(flags: 0x81))
        }
        #expect(throws: WebAuthnError(.invalidCBOR)) {
            try AuthenticatorData(bytes: Self.authData(flags: 0x81, extensions: [0x01]))
        }
    }

    @Test func refusesLongCredentialId() throws {
        _ = try AuthenticatorData(bytes: Self.authData(flags: 0x41, credentialId: [UInt8](repeating: 1, count: 1023)))
        #expect(throws: WebAuthnError(.credentialIdTooLong)) {
            try AuthenticatorData(bytes: Self.authData(flags: 0x41, credentialId: [UInt8](repeating: 1, count: 1024)))
        }
    }

    @Test func aaguidStrings() throws {
        let a = try #require(AAGUID(uuidString: "08987058-CADC-4B81-B6E1-30DE50DCBE96"))
        #expect(a.uuidString == "08987058-cadc-4b81-b6e1-30de50dcbe96")
        #expect(AAGUID(uuidString: "08987058-cadc-4b81-b6e1-30de50dcbe9") == nil)
        #expect(AAGUID(uuidString: "0898705x-cadc-4b81-b6e1-30de50dcbe96") == nil)
        #expect(AAGUID.zero.isZero)
    }
}

struct COSEKeyTests {
    @Test func es256VerifiesAndRoundTrips() throws {
        let priv = P256.Signing.PrivateKey()
        let key = try COSEKey(bytes: AuthenticatorDataTests.coseP256(priv.publicKey))
        let message = Array("hello".utf8)
        let sig = Array(try priv.signature(for: message).derRepresentation)
        try key.verify(signature: sig, over: message)
        #expect(!key.isValidSignature(sig, over: Array("hellp".utf8)))
        #expect(key.subjectPublicKeyInfoDER == Array(priv.publicKey.derRepresentation))
        #expect(try COSEKey(bytes: key.bytes) == key)
        #expect(key.ec2Coordinates?.x.count == 32)
    }

    @Test func curveMustMatchAlgorithm() {
        #expect(throws: WebAuthnError(.invalidCOSEKey)) {
            try COSEKey(bytes: AuthenticatorDataTests.coseP256(alg: -35, crv: 1))
        }
        #expect(throws: WebAuthnError(.invalidCOSEKey)) {
            try COSEKey(bytes: AuthenticatorDataTests.coseP256(alg: -7, crv: 2))
        }
    }

    @Test func pointMustBeOnTheCurve() throws {
        var bytes = AuthenticatorDataTests.coseP256()
        bytes[bytes.count - 1] ^= 0x01
        #expect(throws: WebAuthnError(.invalidCOSEKey)) { try COSEKey(bytes: bytes) }
    }

    @Test func compressedPointsAreRefused() {
        let cose = CBOREncoder.encode(
            .map([
                CBORMapEntry(1, 2), CBORMapEntry(3, -7), CBORMapEntry(-1, 1),
                CBORMapEntry(-2, .byteString([UInt8](repeating: 1, count: 32))), CBORMapEntry(-3, true),
            ]))
        #expect(throws: WebAuthnError(.invalidCOSEKey)) { try COSEKey(bytes: cose) }
    }

    @Test func ed25519() throws {
        let priv = Curve25519.Signing.PrivateKey()
        let cose = CBOREncoder.encode(
            .map([
                CBORMapEntry(1, 1), CBORMapEntry(3, -8), CBORMapEntry(-1, 6),
                CBORMapEntry(-2, .byteString(Array(priv.publicKey.rawRepresentation))),
            ]))
        let key = try COSEKey(bytes: cose)
        let sig = Array(try priv.signature(for: Array("m".utf8)))
        try key.verify(signature: sig, over: Array("m".utf8))
        #expect(key.subjectPublicKeyInfoDER.count == 44)
    }

    @Test(arguments: [(-8, 7), (-53, 7), (-53, 6)])
    func ed448IsUnsupported(alg: Int, crv: Int) {
        let cose = CBOREncoder.encode(
            .map([
                CBORMapEntry(1, 1), CBORMapEntry(3, CBOR(alg)), CBORMapEntry(-1, CBOR(crv)),
                CBORMapEntry(-2, .byteString([UInt8](repeating: 1, count: 57))),
            ]))
        #expect(throws: WebAuthnError(.unsupportedAlgorithm)) { try COSEKey(bytes: cose) }
    }

    @Test func rs1NeedsOptIn() throws {
        let primitives = try _RSA.Signing.PrivateKey(keySize: .bits2048).publicKey.getKeyPrimitives()
        let rsa = CBOREncoder.encode(
            .map([
                CBORMapEntry(1, 3), CBORMapEntry(3, -65535),
                CBORMapEntry(-1, .byteString(Array(primitives.modulus))),
                CBORMapEntry(-2, .byteString(Array(primitives.publicExponent))),
            ]))
        #expect(throws: WebAuthnError(.unsupportedAlgorithm)) { try COSEKey(bytes: rsa) }
        #expect(try COSEKey(bytes: rsa, options: COSEKeyOptions(allowRS1: true)).algorithm == .rs1)
    }

    @Test func missingMembers() {
        #expect(throws: WebAuthnError(.invalidCOSEKey)) {
            try COSEKey(bytes: CBOREncoder.encode(.map([CBORMapEntry(3, -7)])))
        }
        #expect(throws: WebAuthnError(.invalidCOSEKey)) {
            try COSEKey(bytes: CBOREncoder.encode(.map([CBORMapEntry(1, 2)])))
        }
        #expect(throws: WebAuthnError(.invalidCOSEKey)) { try COSEKey(bytes: [0x01]) }
        #expect(throws: WebAuthnError(.unsupportedAlgorithm)) {
            try COSEKey(bytes: CBOREncoder.encode(.map([CBORMapEntry(1, 4), CBORMapEntry(3, -7)])))
        }
    }
}
