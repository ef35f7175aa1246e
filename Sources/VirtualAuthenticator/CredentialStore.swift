import AuthenticatorSigning
import Foundation
import WebAuthn

extension VirtualAuthenticator {
    /// One credential as the authenticator keeps it, private key included. This is a test tool: anything that
    /// holds a `StoredCredential` (or its exported JSON) can sign in as the credential.
    public struct StoredCredential: Sendable {
        public let id: [UInt8]
        public let rpId: String
        public let userHandle: [UInt8]
        public let userName: String
        public let discoverable: Bool
        public let signCounter: Bool
        public internal(set) var signCount: UInt32
        public let backupEligible: Bool
        public let backedUp: Bool
        let key: CredentialKey

        public var algorithm: Algorithm { Algorithm(key.algorithm) }
        /// The credential public key as COSE_Key bytes, as in attested credential data.
        public var publicKeyCOSE: [UInt8] { key.coseKey }
        /// The credential public key as SubjectPublicKeyInfo DER.
        public var publicKeySPKI: [UInt8] { key.subjectPublicKeyInfo }
    }

    /// The file format of ``exportCredentials()``:
    ///
    /// ```json
    /// {"format": "sesame-virtual-authenticator-v1",
    ///  "credentials": [{"id": b64url, "rpId": str, "userHandle": b64url, "userName": str, "algorithm": COSE int,
    ///                   "privateKey": b64url (P-256/Ed25519 raw, RSA PKCS #1 DER), "discoverable": bool,
    ///                   "signCounter": bool, "signCount": uint32, "backupEligible": bool, "backedUp": bool}]}
    /// ```
    struct StoreFile: Codable {
        static let formatName = "sesame-virtual-authenticator-v1"
        var format: String
        var credentials: [Entry]

        struct Entry: Codable {
            var id: String
            var rpId: String
            var userHandle: String
            var userName: String
            var algorithm: Int
            var privateKey: String
            var discoverable: Bool
            var signCounter: Bool
            var signCount: UInt32
            var backupEligible: Bool
            var backedUp: Bool
        }
    }
}

extension VirtualAuthenticator.StoredCredential {
    init(entry e: VirtualAuthenticator.StoreFile.Entry) throws(VirtualAuthenticatorError) {
        guard let algorithm = VirtualAuthenticator.Algorithm(rawValue: e.algorithm) else {
            throw VirtualAuthenticatorError(
                .invalidStore, detail: "stored credential has unsupported algorithm \(e.algorithm)")
        }
        self.id = try ClientEncoding.decodeBase64url(e.id, field: "credential id", code: .invalidStore)
        self.rpId = e.rpId
        self.userHandle = try ClientEncoding.decodeBase64url(e.userHandle, field: "userHandle", code: .invalidStore)
        self.userName = e.userName
        self.discoverable = e.discoverable
        self.signCounter = e.signCounter
        self.signCount = e.signCount
        self.backupEligible = e.backupEligible
        self.backedUp = e.backedUp
        self.key = try CredentialKey(
            algorithm: algorithm,
            privateKeyBytes: try ClientEncoding.decodeBase64url(e.privateKey, field: "privateKey", code: .invalidStore)
        )
    }

    var entry: VirtualAuthenticator.StoreFile.Entry {
        .init(
            id: ClientEncoding.base64url(id), rpId: rpId, userHandle: ClientEncoding.base64url(userHandle),
            userName: userName, algorithm: algorithm.rawValue,
            privateKey: ClientEncoding.base64url(key.privateKeyBytes),
            discoverable: discoverable, signCounter: signCounter, signCount: signCount,
            backupEligible: backupEligible, backedUp: backedUp)
    }
}
