/// `PublicKeyCredentialCreationOptionsJSON` (W3C WebAuthn Level 3 §5.1.9), what the page passes to
/// `PublicKeyCredential.parseCreationOptionsFromJSON()`.
/// ```webidl
/// dictionary PublicKeyCredentialCreationOptionsJSON {
///     required PublicKeyCredentialRpEntity                    rp;
///     required PublicKeyCredentialUserEntityJSON              user;
///     required Base64URLString                                challenge;
///     required sequence<PublicKeyCredentialParameters>        pubKeyCredParams;
///     unsigned long                                           timeout;
///     sequence<PublicKeyCredentialDescriptorJSON>             excludeCredentials = [];
///     AuthenticatorSelectionCriteria                          authenticatorSelection;
///     sequence<DOMString>                                     hints = [];
///     DOMString                                               attestation = "none";
///     sequence<DOMString>                                     attestationFormats = [];
///     AuthenticationExtensionsClientInputsJSON                extensions;
/// };
/// ```
public struct PublicKeyCredentialCreationOptionsJSON: Sendable, Hashable, Codable {
    public var rp: PublicKeyCredentialRpEntity
    public var user: PublicKeyCredentialUserEntityJSON
    public var challenge: Base64URLBytes
    public var pubKeyCredParams: [PublicKeyCredentialParameters]
    /// Milliseconds.
    public var timeout: UInt32?
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var authenticatorSelection: AuthenticatorSelectionCriteria?
    public var hints: [PublicKeyCredentialHint]?
    public var attestation: AttestationConveyancePreference?
    public var attestationFormats: [String]?
    public var extensions: AuthenticationExtensionsClientInputsJSON?

    public init(
        rp: PublicKeyCredentialRpEntity, user: PublicKeyCredentialUserEntityJSON, challenge: [UInt8],
        pubKeyCredParams: [PublicKeyCredentialParameters], timeout: UInt32? = nil,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        authenticatorSelection: AuthenticatorSelectionCriteria? = nil, hints: [PublicKeyCredentialHint]? = nil,
        attestation: AttestationConveyancePreference? = nil, attestationFormats: [String]? = nil,
        extensions: AuthenticationExtensionsClientInputsJSON? = nil
    ) {
        self.rp = rp
        self.user = user
        self.challenge = Base64URLBytes(challenge)
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.hints = hints
        self.attestation = attestation
        self.attestationFormats = attestationFormats
        self.extensions = extensions
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (§5.1.10), for `PublicKeyCredential.parseRequestOptionsFromJSON()`.
/// ```webidl
/// dictionary PublicKeyCredentialRequestOptionsJSON {
///     required Base64URLString                                challenge;
///     unsigned long                                           timeout;
///     DOMString                                               rpId;
///     sequence<PublicKeyCredentialDescriptorJSON>             allowCredentials = [];
///     DOMString                                               userVerification = "preferred";
///     sequence<DOMString>                                     hints = [];
///     AuthenticationExtensionsClientInputsJSON                extensions;
/// };
/// ```
public struct PublicKeyCredentialRequestOptionsJSON: Sendable, Hashable, Codable {
    public var challenge: Base64URLBytes
    /// Milliseconds.
    public var timeout: UInt32?
    public var rpId: String?
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var userVerification: UserVerificationRequirement?
    public var hints: [PublicKeyCredentialHint]?
    public var extensions: AuthenticationExtensionsClientInputsJSON?

    public init(
        challenge: [UInt8], timeout: UInt32? = nil, rpId: String? = nil,
        allowCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        userVerification: UserVerificationRequirement? = nil, hints: [PublicKeyCredentialHint]? = nil,
        extensions: AuthenticationExtensionsClientInputsJSON? = nil
    ) {
        self.challenge = Base64URLBytes(challenge)
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
        self.hints = hints
        self.extensions = extensions
    }
}

/// `dictionary PublicKeyCredentialRpEntity : PublicKeyCredentialEntity { DOMString id; }` with the inherited
/// `required DOMString name` (§5.4.2).
public struct PublicKeyCredentialRpEntity: Sendable, Hashable, Codable {
    public var id: String?
    public var name: String
    public init(id: String?, name: String) {
        self.id = id
        self.name = name
    }
}

/// `dictionary PublicKeyCredentialUserEntityJSON { required Base64URLString id; required DOMString name;
/// required DOMString displayName; }` (§5.1.9). `id` is the user handle: at most 64 random bytes, no personal data.
public struct PublicKeyCredentialUserEntityJSON: Sendable, Hashable, Codable {
    public var id: Base64URLBytes
    public var name: String
    public var displayName: String
    public init(id: [UInt8], name: String, displayName: String) {
        self.id = Base64URLBytes(id)
        self.name = name
        self.displayName = displayName
    }
}

/// `dictionary PublicKeyCredentialParameters { required DOMString type; required COSEAlgorithmIdentifier alg; }`
/// (§5.3).
public struct PublicKeyCredentialParameters: Sendable, Hashable, Codable {
    public var type: String
    public var alg: COSEAlgorithm
    public init(alg: COSEAlgorithm) {
        self.type = PublicKeyCredentialType.publicKey
        self.alg = alg
    }
}

/// `dictionary PublicKeyCredentialDescriptorJSON { required DOMString type; required Base64URLString id;
/// sequence<DOMString> transports; }` (§5.1.9).
public struct PublicKeyCredentialDescriptorJSON: Sendable, Hashable, Codable {
    public var type: String
    public var id: Base64URLBytes
    public var transports: [AuthenticatorTransport]?
    public init(id: [UInt8], transports: [AuthenticatorTransport]? = nil) {
        self.type = PublicKeyCredentialType.publicKey
        self.id = Base64URLBytes(id)
        self.transports = transports
    }
}

/// `dictionary AuthenticatorSelectionCriteria { DOMString authenticatorAttachment; DOMString residentKey;
/// boolean requireResidentKey = false; DOMString userVerification = "preferred"; }` (§5.4.4).
public struct AuthenticatorSelectionCriteria: Sendable, Hashable, Codable {
    public var authenticatorAttachment: AuthenticatorAttachment?
    public var residentKey: ResidentKeyRequirement?
    /// Level 1 name kept for old clients: `true` exactly when `residentKey` is `required`.
    public var requireResidentKey: Bool?
    public var userVerification: UserVerificationRequirement?

    public init(
        authenticatorAttachment: AuthenticatorAttachment? = nil, residentKey: ResidentKeyRequirement? = nil,
        userVerification: UserVerificationRequirement? = nil
    ) {
        self.authenticatorAttachment = authenticatorAttachment
        self.residentKey = residentKey
        self.requireResidentKey = residentKey.map { $0 == .required }
        self.userVerification = userVerification
    }
}

/// The client extension inputs Sesame sends (`AuthenticationExtensionsClientInputsJSON`, §5.7.1 and §10.1).
/// ```webidl
/// partial dictionary AuthenticationExtensionsClientInputsJSON {
///     DOMString appid;                                   // §10.1.1, authentication only
///     boolean credProps;                                 // §10.1.3, registration only
///     AuthenticationExtensionsPRFInputsJSON prf;         // §10.1.4
///     AuthenticationExtensionsLargeBlobInputsJSON largeBlob;  // §10.1.5
/// };
/// ```
public struct AuthenticationExtensionsClientInputsJSON: Sendable, Hashable, Codable {
    public var appid: String?
    public var credProps: Bool?
    public var prf: PRFInputs?
    public var largeBlob: LargeBlobInputs?

    public init(appid: String? = nil, credProps: Bool? = nil, prf: PRFInputs? = nil, largeBlob: LargeBlobInputs? = nil)
    {
        self.appid = appid
        self.credProps = credProps
        self.prf = prf
        self.largeBlob = largeBlob
    }

    /// `dictionary AuthenticationExtensionsPRFValuesJSON { required Base64URLString first; Base64URLString second; }`
    public struct PRFValues: Sendable, Hashable, Codable {
        public var first: Base64URLBytes
        public var second: Base64URLBytes?
        public init(first: [UInt8], second: [UInt8]? = nil) {
            self.first = Base64URLBytes(first)
            self.second = second.map(Base64URLBytes.init)
        }
    }

    /// `dictionary AuthenticationExtensionsPRFInputsJSON { AuthenticationExtensionsPRFValuesJSON eval;
    /// record<DOMString, AuthenticationExtensionsPRFValuesJSON> evalByCredential; }`
    public struct PRFInputs: Sendable, Hashable, Codable {
        public var eval: PRFValues?
        /// Keyed by base64url credential ID (authentication with an allow list only).
        public var evalByCredential: [String: PRFValues]?
        public init(eval: PRFValues? = nil, evalByCredential: [String: PRFValues]? = nil) {
            self.eval = eval
            self.evalByCredential = evalByCredential
        }
    }

    /// `dictionary AuthenticationExtensionsLargeBlobInputsJSON { DOMString support; boolean read;
    /// Base64URLString write; }`: `support` at registration, `read` or `write` at authentication.
    public struct LargeBlobInputs: Sendable, Hashable, Codable {
        public var support: LargeBlobSupport?
        public var read: Bool?
        public var write: Base64URLBytes?
        public init(support: LargeBlobSupport? = nil, read: Bool? = nil, write: [UInt8]? = nil) {
            self.support = support
            self.read = read
            self.write = write.map(Base64URLBytes.init)
        }
    }
}
