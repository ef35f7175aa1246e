import CBOR
import Crypto
import CryptoExtras
import Foundation
import Testing
import WebAuthn

@testable import VirtualAuthenticator

// Checks of the software authenticator against its own contract, using only swift-crypto, the CBOR decoder and
// Foundation's JSON parser (not the WebAuthn library's ceremony code).

let origin = "https://login.example.com"

func creationOptions(
    rpId: String? = "example.com", algs: [Int] = [-8, -7, -257, -49, -50], residentKey: String? = "required",
    userVerification: String = "preferred", exclude: [[UInt8]] = [], credProps: Bool = false,
    challenge: [UInt8] = Array(repeating: 0xc1, count: 32), userId: [UInt8] = [1, 2, 3, 4]
) -> [UInt8] {
    var rp: [String: Any] = ["name": "Example"]
    if let rpId { rp["id"] = rpId }
    var selection: [String: Any] = ["userVerification": userVerification]
    if let residentKey { selection["residentKey"] = residentKey }
    var o: [String: Any] = [
        "rp": rp,
        "user": ["id": ClientEncoding.base64url(userId), "name": "alice", "displayName": "Alice"],
        "challenge": ClientEncoding.base64url(challenge),
        "pubKeyCredParams": algs.map { ["type": "public-key", "alg": $0] },
        "authenticatorSelection": selection,
        "excludeCredentials": exclude.map { ["type": "public-key", "id": ClientEncoding.base64url($0)] },
        "attestation": "direct",
    ]
    if credProps { o["extensions"] = ["credProps": true] }
    return Array(try! JSONSerialization.data(withJSONObject: o))
}

func requestOptions(
    rpId: String? = "example.com", allow: [[UInt8]] = [], userVerification: String = "preferred",
    challenge: [UInt8] = Array(repeating: 0xa7, count: 32)
) -> [UInt8] {
    var o: [String: Any] = [
        "challenge": ClientEncoding.base64url(challenge), "userVerification": userVerification,
        "allowCredentials": allow.map { ["type": "public-key", "id": ClientEncoding.base64url($0)] },
    ]
    if let rpId { o["rpId"] = rpId }
    return Array(try! JSONSerialization.data(withJSONObject: o))
}

/// The parsed pieces of a RegistrationResponseJSON, read with Foundation and the CBOR decoder.
struct ParsedRegistration {
    let json: [String: Any]
    let id: [UInt8]
    let clientData: [String: Any]
    let clientDataJSON: [UInt8]
    let fmt: String
    let attStmt: CBOR
    let authData: [UInt8]
    let credentialId: [UInt8]
    let cose: CBOR
    let spki: [UInt8]
    let alg: Int

    init(_ bytes: [UInt8]) throws {
        json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json["type"] as? String == "public-key")
        #expect(json["id"] as? String == json["rawId"] as? String)
        id = try Base64URL.decode(try #require(json["id"] as? String))
        let response = try #require(json["response"] as? [String: Any])
        clientDataJSON = try Base64URL.decode(try #require(response["clientDataJSON"] as? String))
        clientData = try #require(try JSONSerialization.jsonObject(with: Data(clientDataJSON)) as? [String: Any])
        let attObj = try CBORDecoder(options: .ctap2).decode(
            try Base64URL.decode(try #require(response["attestationObject"] as? String)))
        fmt = try #require(attObj[text: "fmt"]?.string)
        attStmt = try #require(attObj[text: "attStmt"])
        authData = try #require(attObj[text: "authData"]?.bytes)
        #expect(try Base64URL.decode(try #require(response["authenticatorData"] as? String)) == authData)
        try #require(authData.count > 55)
        let idLength = Int(authData[53]) << 8 | Int(authData[54])
        try #require(authData.count >= 55 + idLength)
        credentialId = Array(authData[55..<55 + idLength])
        let (key, used) = try CBORDecoder(options: .ctap2).decodePrefix(authData[(55 + idLength)...])
        #expect(used == authData.count - 55 - idLength, "no extensions, so the COSE key ends authData")
        cose = key
        spki = try Base64URL.decode(try #require(response["publicKey"] as? String))
        alg = try #require(response["publicKeyAlgorithm"] as? Int)
    }

    var flags: UInt8 { authData[32] }
    var signCount: UInt32 { authData[33..<37].reduce(0) { $0 << 8 | UInt32($1) } }
}

struct ParsedAssertion {
    let id: [UInt8]
    let clientData: [String: Any]
    let clientDataJSON: [UInt8]
    let authData: [UInt8]
    let signature: [UInt8]
    let userHandle: [UInt8]?

    init(_ bytes: [UInt8]) throws {
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(json["type"] as? String == "public-key")
        id = try Base64URL.decode(try #require(json["rawId"] as? String))
        let response = try #require(json["response"] as? [String: Any])
        clientDataJSON = try Base64URL.decode(try #require(response["clientDataJSON"] as? String))
        clientData = try #require(try JSONSerialization.jsonObject(with: Data(clientDataJSON)) as? [String: Any])
        authData = try Base64URL.decode(try #require(response["authenticatorData"] as? String))
        signature = try Base64URL.decode(try #require(response["signature"] as? String))
        userHandle = try (response["userHandle"] as? String).map { try Base64URL.decode($0) }
    }

    var flags: UInt8 { authData[32] }
    var signCount: UInt32 { authData[33..<37].reduce(0) { $0 << 8 | UInt32($1) } }
}

/// Verifies with swift-crypto directly, from the SubjectPublicKeyInfo the client reported.
func verify(alg: Int, spki: [UInt8], signature: [UInt8], data: [UInt8]) throws -> Bool {
    switch alg {
    case -7:
        let key = try P256.Signing.PublicKey(derRepresentation: spki)
        return key.isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: signature), for: data)
    case -8:
        #expect(spki.count == 44)
        let key = try Curve25519.Signing.PublicKey(rawRepresentation: spki.suffix(32))
        return key.isValidSignature(signature, for: data)
    case -257:
        let key = try _RSA.Signing.PublicKey(derRepresentation: spki)
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
    case -49:
        // RFC 9881 SPKI: a 22-byte header (SEQUENCE, AlgorithmIdentifier, BIT STRING with 0 unused bits), then pub.
        #expect(spki.count == 22 + 1952)
        return try MLDSA65.PublicKey(rawRepresentation: spki.suffix(1952)).isValidSignature(signature, for: data)
    case -50:
        #expect(spki.count == 22 + 2592)
        return try MLDSA87.PublicKey(rawRepresentation: spki.suffix(2592)).isValidSignature(signature, for: data)
    default:
        Issue.record("unexpected algorithm \(alg)")
        return false
    }
}

func sha256(_ b: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: b)) }

@Suite struct RegistrationTests {
    @Test(arguments: VirtualAuthenticator.Algorithm.allCases, VirtualAuthenticator.Attestation.allCases)
    func registrationIsWellFormed(
        algorithm: VirtualAuthenticator.Algorithm, attestation: VirtualAuthenticator.Attestation
    )
        throws
    {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [algorithm], attestation: attestation))
        let r = try ParsedRegistration(va.create(optionsJSON: creationOptions(credProps: true), origin: origin).json)

        #expect(r.alg == algorithm.rawValue)
        #expect(r.id == r.credentialId)
        #expect(r.id.count == 32)
        #expect(Array(r.authData[0..<32]) == sha256(Array("example.com".utf8)))
        #expect(r.flags == 0x01 | 0x04 | 0x40, "UP, UV, AT")
        #expect(r.signCount == 1)
        #expect(Array(r.authData[37..<53]) == VirtualAuthenticator.defaultAAGUID)
        #expect(r.clientData["type"] as? String == "webauthn.create")
        #expect(r.clientData["challenge"] as? String == ClientEncoding.base64url(Array(repeating: 0xc1, count: 32)))
        #expect(r.clientData["origin"] as? String == origin)
        #expect(r.clientData["crossOrigin"] as? Bool == false)
        let ext = r.json["clientExtensionResults"] as? [String: Any]
        #expect((ext?["credProps"] as? [String: Any])?["rk"] as? Bool == true)
        #expect(r.json["authenticatorAttachment"] as? String == "platform")

        // The COSE key names the algorithm and is the same key as the SPKI.
        #expect(r.cose[int: 3]?.int == algorithm.rawValue)
        switch algorithm {
        case .es256:
            #expect(r.cose[int: 1]?.int == 2 && r.cose[int: -1]?.int == 1)
            let key = try P256.Signing.PublicKey(derRepresentation: r.spki)
            let point = Array(key.x963Representation)
            #expect(r.cose[int: -2]?.bytes == Array(point[1..<33]))
            #expect(r.cose[int: -3]?.bytes == Array(point[33..<65]))
        case .edDSA:
            #expect(r.cose[int: 1]?.int == 1 && r.cose[int: -1]?.int == 6)
            #expect(r.cose[int: -2]?.bytes == Array(r.spki.suffix(32)))
        case .rs256:
            #expect(r.cose[int: 1]?.int == 3)
            let key = try _RSA.Signing.PublicKey(
                n: try #require(r.cose[int: -1]?.bytes), e: try #require(r.cose[int: -2]?.bytes))
            #expect(Array(key.derRepresentation) == r.spki)
            #expect(key.keySizeInBits == 2048)
        case .mldsa65, .mldsa87:
            // AKP (kty 7): only alg and pub; pub is the SPKI's key, and the OID names the parameter set.
            #expect(r.cose[int: 1]?.int == 7 && r.cose.mapEntries?.count == 3)
            let pub = try #require(r.cose[int: -1]?.bytes)
            #expect(pub.count == (algorithm == .mldsa65 ? 1952 : 2592))
            #expect(Array(r.spki.suffix(pub.count)) == pub)
            let oid: [UInt8] = [
                0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, algorithm == .mldsa65 ? 18 : 19,
            ]
            #expect(Array(r.spki[6..<17]) == oid)
        }

        switch attestation {
        case .none:
            #expect(r.fmt == "none")
            #expect(r.attStmt == .map([]))
        case .packedSelf:
            #expect(r.fmt == "packed")
            #expect(r.attStmt[text: "alg"]?.int == algorithm.rawValue)
            #expect(r.attStmt[text: "x5c"] == nil)
            let sig = try #require(r.attStmt[text: "sig"]?.bytes)
            #expect(try verify(alg: r.alg, spki: r.spki, signature: sig, data: r.authData + sha256(r.clientDataJSON)))
            // and only over those bytes
            #expect(
                try !verify(
                    alg: r.alg, spki: r.spki, signature: sig, data: r.authData + sha256(r.clientDataJSON + [0x20])))
        }
    }

    @Test func picksTheFirstSupportedAlgorithmInTheRelyingPartysOrder() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256, .rs256]))
        let r = try ParsedRegistration(
            va.create(optionsJSON: creationOptions(algs: [-36, -8, -257, -7]), origin: origin).json)
        #expect(r.alg == -257)
        let empty = try ParsedRegistration(va.create(optionsJSON: creationOptions(algs: []), origin: origin).json)
        #expect(empty.alg == -7, "an empty list means ES256 then RS256")
        #expect(throws: VirtualAuthenticatorError(.notSupportedError)) {
            try va.create(optionsJSON: creationOptions(algs: [-8, -35]), origin: origin)
        }
    }

    @Test func unusableConfigurationIsTheCallersMistakeNotARefusal() throws {
        for configuration in [
            VirtualAuthenticator.Configuration(aaguid: [1, 2, 3]),
            VirtualAuthenticator.Configuration(credentialIdLength: 8),
        ] {
            let va = VirtualAuthenticator(configuration: configuration)
            let error = try #require(throws: VirtualAuthenticatorError.self) {
                try va.create(optionsJSON: creationOptions(), origin: origin)
            }
            #expect(error.code == .invalidConfiguration)
            #expect(!error.isRefusal, "a browser would not show a page a DOMException for its own misconfiguration")
        }
        let refused = try #require(throws: VirtualAuthenticatorError.self) {
            try VirtualAuthenticator().get(optionsJSON: requestOptions(), origin: origin)
        }
        #expect(refused.code.name == "NotAllowedError" && refused.isRefusal)
    }

    @Test func excludedCredentialIsRefused() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        let first = try va.create(optionsJSON: creationOptions(), origin: origin)
        #expect(throws: VirtualAuthenticatorError(.invalidStateError)) {
            try va.create(optionsJSON: creationOptions(exclude: [[9, 9], first.credentialId]), origin: origin)
        }
        // Another RP's exclude list does not match this RP's credential.
        _ = try va.create(
            optionsJSON: creationOptions(rpId: "login.example.com", exclude: [first.credentialId]), origin: origin)
        #expect(va.credentials.count == 2)
    }

    @Test func discoverableCredentialForTheSameUserIsReplaced() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        _ = try va.create(optionsJSON: creationOptions(), origin: origin)
        let second = try va.create(optionsJSON: creationOptions(), origin: origin)
        _ = try va.create(optionsJSON: creationOptions(userId: [7]), origin: origin)
        _ = try va.create(optionsJSON: creationOptions(residentKey: "discouraged"), origin: origin)
        #expect(va.credentials.count == 3)
        #expect(va.credentials.first?.id == second.credentialId)
    }

    @Test(arguments: [
        ("required", nil as Bool?, true), ("preferred", nil, true), ("discouraged", nil, false),
        ("discouraged", true, true), ("bogus", nil, false),
    ])
    func residentKeyOption(residentKey: String, requireResidentKey: Bool?, discoverable: Bool) throws {
        var o = try #require(
            try JSONSerialization.jsonObject(with: Data(creationOptions(residentKey: nil, credProps: true)))
                as? [String: Any])
        var selection: [String: Any] = ["residentKey": residentKey]
        if let requireResidentKey { selection["requireResidentKey"] = requireResidentKey }
        if residentKey == "discouraged" && requireResidentKey == true { selection["residentKey"] = nil }
        o["authenticatorSelection"] = selection
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        let r = try va.create(optionsJSON: Array(try JSONSerialization.data(withJSONObject: o)), origin: origin)
        #expect(r.credPropsResidentKey == discoverable)
        #expect(va.credentials.first?.discoverable == discoverable)
    }

    @Test func authenticatorWithoutResidentKeys() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256], residentKeys: false))
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try va.create(optionsJSON: creationOptions(residentKey: "required"), origin: origin)
        }
        #expect(va.credentials.isEmpty)
        let r = try va.create(optionsJSON: creationOptions(residentKey: "preferred", credProps: true), origin: origin)
        #expect(r.credPropsResidentKey == false)
        #expect(va.credentials.first?.discoverable == false)
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try va.get(optionsJSON: requestOptions(), origin: origin)
        }
        let a = try ParsedAssertion(va.get(optionsJSON: requestOptions(allow: [r.credentialId]), origin: origin).json)
        #expect(a.userHandle == nil)
    }

    @Test func userVerificationFollowsOptionsAndCapability() throws {
        let capable = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        let unable = VirtualAuthenticator(configuration: .init(algorithms: [.es256], userVerification: false))
        for (va, uv, expected) in [
            (capable, "required", true), (capable, "preferred", true), (capable, "discouraged", false),
            (unable, "preferred", false), (unable, "discouraged", false),
        ] {
            let r = try ParsedRegistration(
                va.create(optionsJSON: creationOptions(userVerification: uv), origin: origin).json)
            #expect((r.flags & 0x04 != 0) == expected, "\(uv)")
        }
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try unable.create(optionsJSON: creationOptions(userVerification: "required"), origin: origin)
        }
    }

    @Test(arguments: [(false, false, UInt8(0)), (true, false, 0x08), (true, true, 0x18), (false, true, 0x10)])
    func backupFlagsAsConfigured(be: Bool, bs: Bool, bits: UInt8) throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256], backupEligible: be, backedUp: bs))
        let r = try ParsedRegistration(va.create(optionsJSON: creationOptions(), origin: origin).json)
        #expect(r.flags & 0x18 == bits)
        let a = try ParsedAssertion(va.get(optionsJSON: requestOptions(), origin: origin).json)
        #expect(a.flags & 0x18 == bits)
    }

    @Test(
        arguments: [
            ("https://example.com", "example.com", true), ("https://login.example.com", "example.com", true),
            ("https://example.com:8443", nil, true), ("http://localhost:8080", "localhost", true),
            ("http://localhost:8080", nil, true),
            ("https://example.com", "login.example.com", false), ("https://badexample.com", "example.com", false),
            ("https://example.com", "com", false), ("https://example.org", "example.com", false),
            ("http://example.com", "example.com", false), ("https://127.0.0.1", nil, false),
            ("https://example.com/path", nil, false), ("ftp://example.com", nil, false),
            ("https://example.com", ".example.com", false),
        ] as [(String, String?, Bool)])
    func relyingPartyIdMustBeARegistrableSuffixOfTheOrigin(page: String, rpId: String?, accepted: Bool) throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        if accepted {
            let r = try ParsedRegistration(va.create(optionsJSON: creationOptions(rpId: rpId), origin: page).json)
            let host = try #require(URLComponents(string: page)?.host)
            #expect(Array(r.authData[0..<32]) == sha256(Array((rpId ?? host).utf8)))
            #expect(r.clientData["origin"] as? String == page)
        } else {
            #expect(throws: VirtualAuthenticatorError(.securityError)) {
                try va.create(optionsJSON: creationOptions(rpId: rpId), origin: page)
            }
        }
    }

    @Test(arguments: [
        #"{}"#, #"{"rp":{"name":"x"},"user":{"id":"AQ","name":"a","displayName":"A"},"pubKeyCredParams":[]}"#,
        #"{"rp":{"name":"x"},"user":{"id":"AQ","name":"a","displayName":"A"},"challenge":"a+b/","pubKeyCredParams":[]}"#,
        #"{"rp":{"name":"x"},"user":{"id":"","name":"a","displayName":"A"},"challenge":"AAAA","pubKeyCredParams":[]}"#,
        #"{"rp":{"name":"x"},"user":{"id":"AQ","name":"a","displayName":"A"},"challenge":"AAAA","pubKeyCredParams":[{"type":"public-key","alg":"ES256"}]}"#,
        "not json",
    ])
    func malformedOptionsAreATypeError(json: String) {
        let va = VirtualAuthenticator()
        #expect(throws: VirtualAuthenticatorError(.invalidOptions)) {
            try va.create(optionsJSON: Array(json.utf8), origin: origin)
        }
    }

    @Test func userIdLongerThan64BytesIsRefused() {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        #expect(throws: VirtualAuthenticatorError(.invalidOptions)) {
            try va.create(optionsJSON: creationOptions(userId: Array(repeating: 1, count: 65)), origin: origin)
        }
    }
}

@Suite struct AuthenticationTests {
    @Test(arguments: VirtualAuthenticator.Algorithm.allCases)
    func assertionSignatureVerifies(algorithm: VirtualAuthenticator.Algorithm) throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [algorithm]))
        let reg = try ParsedRegistration(va.create(optionsJSON: creationOptions(), origin: origin).json)
        let a = try ParsedAssertion(va.get(optionsJSON: requestOptions(allow: [reg.id]), origin: origin).json)
        #expect(a.id == reg.id)
        #expect(a.authData.count == 37, "no attested credential data, no extensions")
        #expect(Array(a.authData[0..<32]) == sha256(Array("example.com".utf8)))
        #expect(a.flags == 0x05)
        #expect(a.clientData["type"] as? String == "webauthn.get")
        #expect(a.clientData["challenge"] as? String == ClientEncoding.base64url(Array(repeating: 0xa7, count: 32)))
        #expect(a.userHandle == [1, 2, 3, 4])
        #expect(
            try verify(
                alg: reg.alg, spki: reg.spki, signature: a.signature, data: a.authData + sha256(a.clientDataJSON)))
        #expect(
            try !verify(
                alg: reg.alg, spki: reg.spki, signature: a.signature, data: reg.authData + sha256(a.clientDataJSON)))
    }

    @Test func counterIncrementsOrStaysZero() throws {
        let counting = VirtualAuthenticator(configuration: .init(algorithms: [.edDSA]))
        let reg = try ParsedRegistration(counting.create(optionsJSON: creationOptions(), origin: origin).json)
        #expect(reg.signCount == 1)
        let counts = try (0..<3).map { _ in
            try ParsedAssertion(counting.get(optionsJSON: requestOptions(), origin: origin).json).signCount
        }
        #expect(counts == [2, 3, 4])

        let flat = VirtualAuthenticator(configuration: .init(algorithms: [.edDSA], signCounter: false))
        #expect(try ParsedRegistration(flat.create(optionsJSON: creationOptions(), origin: origin).json).signCount == 0)
        for _ in 0..<3 {
            #expect(try ParsedAssertion(flat.get(optionsJSON: requestOptions(), origin: origin).json).signCount == 0)
        }

        var fixed = VirtualAuthenticator.Behaviour()
        fixed.signCount = 1
        #expect(
            try ParsedAssertion(counting.get(optionsJSON: requestOptions(), origin: origin, behaviour: fixed).json)
                .signCount == 1)
        #expect(try ParsedAssertion(counting.get(optionsJSON: requestOptions(), origin: origin).json).signCount == 6)
    }

    @Test func allowListAndDiscoverability() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        let resident = try va.create(optionsJSON: creationOptions(userId: [1]), origin: origin)
        let plain = try va.create(optionsJSON: creationOptions(residentKey: "discouraged", userId: [2]), origin: origin)
        let other = try va.create(optionsJSON: creationOptions(rpId: "login.example.com", userId: [3]), origin: origin)

        // Empty allow list: only discoverable credentials of this RP; the user handle comes back.
        let a = try ParsedAssertion(va.get(optionsJSON: requestOptions(), origin: origin).json)
        #expect(a.id == resident.credentialId)
        #expect(a.userHandle == [1])

        // Allow list: the non-discoverable one is found; no user handle for it.
        let b = try ParsedAssertion(
            va.get(optionsJSON: requestOptions(allow: [[0], plain.credentialId]), origin: origin).json)
        #expect(b.id == plain.credentialId)
        #expect(b.userHandle == nil)

        // A credential of another RP ID is not usable here, even when listed.
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try va.get(optionsJSON: requestOptions(allow: [other.credentialId]), origin: origin)
        }
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try va.get(optionsJSON: requestOptions(allow: [[1, 2, 3]]), origin: origin)
        }
        // Choosing among several.
        let c = try ParsedAssertion(
            va.get(
                optionsJSON: requestOptions(allow: [resident.credentialId, plain.credentialId]), origin: origin,
                credentialId: plain.credentialId
            ).json)
        #expect(c.id == plain.credentialId)

        let onlyPlain = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        _ = try onlyPlain.create(optionsJSON: creationOptions(residentKey: "discouraged"), origin: origin)
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try onlyPlain.get(optionsJSON: requestOptions(), origin: origin)
        }
    }

    @Test func userVerificationOnAssertions() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        _ = try va.create(optionsJSON: creationOptions(), origin: origin)
        #expect(
            try ParsedAssertion(va.get(optionsJSON: requestOptions(userVerification: "required"), origin: origin).json)
                .flags == 0x05)
        #expect(
            try ParsedAssertion(
                va.get(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin).json
            ).flags == 0x01)
        let unable = try VirtualAuthenticator(
            configuration: .init(algorithms: [.es256], userVerification: false), importing: va.exportCredentials())
        #expect(try ParsedAssertion(unable.get(optionsJSON: requestOptions(), origin: origin).json).flags == 0x01)
        #expect(throws: VirtualAuthenticatorError(.notAllowedError)) {
            try unable.get(optionsJSON: requestOptions(userVerification: "required"), origin: origin)
        }
    }

    @Test func exportAndImportKeepKeysAndCounters() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.rs256]))
        let reg = try ParsedRegistration(va.create(optionsJSON: creationOptions(), origin: origin).json)
        _ = try va.get(optionsJSON: requestOptions(), origin: origin)
        let exported = va.exportCredentials()
        let file = try #require(try JSONSerialization.jsonObject(with: Data(exported)) as? [String: Any])
        #expect(file["format"] as? String == "sesame-virtual-authenticator-v1")

        let again = try VirtualAuthenticator(importing: exported)
        let a = try ParsedAssertion(again.get(optionsJSON: requestOptions(allow: [reg.id]), origin: origin).json)
        #expect(a.signCount == 3)
        #expect(
            try verify(
                alg: reg.alg, spki: reg.spki, signature: a.signature, data: a.authData + sha256(a.clientDataJSON)))

        #expect(throws: VirtualAuthenticatorError(.invalidStore)) {
            try VirtualAuthenticator(importing: Array("{}".utf8))
        }
        var broken = try #require(try JSONSerialization.jsonObject(with: Data(exported)) as? [String: Any])
        var entries = try #require(broken["credentials"] as? [[String: Any]])
        entries[0]["privateKey"] = "AAAA"
        broken["credentials"] = entries
        #expect(throws: VirtualAuthenticatorError(.invalidStore)) {
            try VirtualAuthenticator(importing: Array(try JSONSerialization.data(withJSONObject: broken)))
        }
    }

    @Test func concurrentUseKeepsEveryCredential() async throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.es256]))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask { _ = try va.create(optionsJSON: creationOptions(userId: [UInt8(i)]), origin: origin) }
            }
            try await group.waitForAll()
        }
        #expect(va.credentials.count == 16)
        #expect(Set(va.credentials.map(\.id)).count == 16)
    }
}

@Suite struct NegativeBehaviourTests {
    func make(signCounter: Bool = true) throws -> (VirtualAuthenticator, ParsedRegistration) {
        let va = VirtualAuthenticator(
            configuration: .init(algorithms: [.es256], signCounter: signCounter, attestation: .packedSelf))
        return (va, try ParsedRegistration(va.create(optionsJSON: creationOptions(), origin: origin).json))
    }

    @Test func signedDeviationsKeepAValidSignature() throws {
        let (va, reg) = try make()
        var b = VirtualAuthenticator.Behaviour()
        b.userPresent = false
        b.userVerified = false
        b.flagsXOR = 0x10
        b.clientDataType = "webauthn.create"
        b.clientDataOrigin = "https://evil.example"
        b.tamperChallenge = true
        b.rpIdForHash = "evil.example"
        b.crossOrigin = true
        b.topOrigin = "https://top.example"
        b.userHandle = .bytes([9])
        let a = try ParsedAssertion(va.get(optionsJSON: requestOptions(), origin: origin, behaviour: b).json)
        #expect(a.flags == 0x10)
        #expect(a.clientData["type"] as? String == "webauthn.create")
        #expect(a.clientData["origin"] as? String == "https://evil.example")
        #expect(a.clientData["crossOrigin"] as? Bool == true)
        #expect(a.clientData["topOrigin"] as? String == "https://top.example")
        var challenge = Array(repeating: UInt8(0xa7), count: 32)
        challenge[31] ^= 1
        #expect(a.clientData["challenge"] as? String == ClientEncoding.base64url(challenge))
        #expect(Array(a.authData[0..<32]) == sha256(Array("evil.example".utf8)))
        #expect(a.userHandle == [9])
        #expect(
            try verify(
                alg: reg.alg, spki: reg.spki, signature: a.signature, data: a.authData + sha256(a.clientDataJSON)))
        // Client data member order is the one §5.8.1.1 fixes.
        let text = String(decoding: a.clientDataJSON, as: UTF8.self)
        #expect(text.hasPrefix(#"{"type":"webauthn.create","challenge":""#))
        #expect(
            text.hasSuffix(#","origin":"https://evil.example","crossOrigin":true,"topOrigin":"https://top.example"}"#))
    }

    @Test(arguments: [
        VirtualAuthenticator.Tamper.authenticatorData(at: 0), .authenticatorData(at: 32), .authenticatorData(at: -1),
        .signature(at: 10), .clientDataJSON(at: 20),
    ])
    func tamperingAfterSigningBreaksTheSignature(tamper: VirtualAuthenticator.Tamper) throws {
        let (va, reg) = try make(signCounter: false)  // so the clean and tampered data differ only by the tamper
        let clean = try ParsedAssertion(va.get(optionsJSON: requestOptions(), origin: origin).json)
        var b = VirtualAuthenticator.Behaviour()
        b.tamper = [tamper]
        let a = try ParsedAssertion(va.get(optionsJSON: requestOptions(), origin: origin, behaviour: b).json)
        #expect(
            try !verify(
                alg: reg.alg, spki: reg.spki, signature: a.signature, data: a.authData + sha256(a.clientDataJSON)))
        switch tamper {
        case .authenticatorData(let at):
            #expect(a.authData.count == clean.authData.count)
            let i = (at + 37) % 37
            #expect(a.authData[i] != clean.authData[i])
        case .clientDataJSON: #expect(a.clientDataJSON != clean.clientDataJSON)
        case .signature: #expect(a.clientDataJSON.count == clean.clientDataJSON.count)
        }
    }

    @Test func tamperedRegistrationBreaksThePackedSignature() throws {
        let va = VirtualAuthenticator(configuration: .init(algorithms: [.edDSA], attestation: .packedSelf))
        var b = VirtualAuthenticator.Behaviour()
        b.tamper = [.authenticatorData(at: 40)]
        b.responseCredentialId = [1, 2, 3]
        let r = try ParsedRegistration(va.create(optionsJSON: creationOptions(), origin: origin, behaviour: b).json)
        #expect(r.id == [1, 2, 3])
        #expect(r.credentialId != r.id)
        let sig = try #require(r.attStmt[text: "sig"]?.bytes)
        #expect(try !verify(alg: r.alg, spki: r.spki, signature: sig, data: r.authData + sha256(r.clientDataJSON)))
    }
}

/// The library's own parsers (AttestationObject, AuthenticatorData, COSEKey) read what the authenticator writes.
/// They are independent of the parsing above, so these agree only if both sides follow the wire formats.
@Suite struct LibraryParsersReadTheOutput {
    @Test(arguments: VirtualAuthenticator.Algorithm.allCases, VirtualAuthenticator.Attestation.allCases)
    func attestationObjectAndAssertion(
        algorithm: VirtualAuthenticator.Algorithm, attestation: VirtualAuthenticator.Attestation
    )
        throws
    {
        let va = VirtualAuthenticator(
            configuration: .init(
                algorithms: [algorithm], backupEligible: true, backedUp: true, attestation: attestation))
        let reg = try va.create(optionsJSON: creationOptions(), origin: origin)
        let object = try AttestationObject(bytes: reg.attestationObject)
        #expect(object.format == attestation.rawValue)
        let data = object.authenticatorData
        #expect(data.bytes == reg.authenticatorData)
        #expect(data.flags == [.userPresent, .userVerified, .backupEligible, .backedUp, .attestedCredentialData])
        #expect(data.signCount == 1)
        #expect(data.rpIdHash == sha256(Array("example.com".utf8)))
        let attested = try #require(data.attestedCredentialData)
        #expect(attested.credentialId == reg.credentialId)
        #expect(attested.aaguid.bytes == VirtualAuthenticator.defaultAAGUID)
        #expect(attested.publicKey.algorithm == algorithm.coseAlgorithm)
        #expect(attested.publicKey.subjectPublicKeyInfoDER == reg.publicKey)
        #expect(attested.publicKeyBytes == va.credentials[0].publicKeyCOSE)

        let assertion = try va.get(optionsJSON: requestOptions(), origin: origin)
        let assertionData = try AuthenticatorData(bytes: assertion.authenticatorData)
        #expect(assertionData.signCount == 2)
        #expect(assertionData.attestedCredentialData == nil)
        let signed = assertion.authenticatorData + sha256(assertion.clientDataJSON)
        #expect(attested.publicKey.isValidSignature(assertion.signature, over: signed))
        #expect(!attested.publicKey.isValidSignature(assertion.signature, over: signed + [0]))
    }
}
