import Foundation
import WebAuthn

/// The creation options as the client reads them from `PublicKeyCredentialCreationOptionsJSON`
/// (W3C WebAuthn Level 3 §5.1.8 `parseCreationOptionsFromJSON`). Only what a client and authenticator act on is
/// kept.
///
/// ```webidl
/// dictionary PublicKeyCredentialCreationOptionsJSON {
///     required PublicKeyCredentialRpEntity                    rp;        // { id?, name }
///     required PublicKeyCredentialUserEntityJSON              user;      // { id: Base64URLString, name, displayName }
///     required Base64URLString                                challenge;
///     required sequence<PublicKeyCredentialParameters>        pubKeyCredParams;   // [{ type, alg }]
///     unsigned long                                           timeout;
///     sequence<PublicKeyCredentialDescriptorJSON>             excludeCredentials = [];  // [{ id, type, transports? }]
///     AuthenticatorSelectionCriteria                          authenticatorSelection;
///     sequence<DOMString>                                     hints = [];
///     DOMString                                               attestation = "none";
///     sequence<DOMString>                                     attestationFormats = [];
///     AuthenticationExtensionsClientInputsJSON                extensions;
/// };
/// ```
public struct ClientCreationOptions: Sendable, Hashable {
    public var rpId: String?
    public var rpName: String
    public var userId: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var challenge: [UInt8]
    /// COSE algorithm identifiers of the `public-key` entries, in the relying party's order of preference.
    public var algorithms: [Int]
    public var excludeCredentials: [[UInt8]]
    public var residentKey: String
    public var userVerification: String
    public var attestation: String
    public var credProps: Bool

    /// Reads the options JSON as a browser does; malformed input is ``VirtualAuthenticatorError/Code/invalidOptions``.
    public init(json: some Collection<UInt8>) throws(VirtualAuthenticatorError) {
        let raw: CreationJSON
        do {
            raw = try JSONDecoder().decode(CreationJSON.self, from: Data(json))
        } catch {
            throw VirtualAuthenticatorError(
                .invalidOptions, detail: "creation options are not PublicKeyCredentialCreationOptionsJSON")
        }
        rpId = raw.rp.id
        rpName = raw.rp.name
        userId = try ClientEncoding.decodeBase64url(raw.user.id, field: "user.id")
        // §5.4.3: user.id is at most 64 bytes; browsers also refuse an empty one.
        guard (1...64).contains(userId.count) else {
            throw VirtualAuthenticatorError(.invalidOptions, detail: "user.id must be 1 to 64 bytes")
        }
        userName = raw.user.name
        userDisplayName = raw.user.displayName
        challenge = try ClientEncoding.decodeBase64url(raw.challenge, field: "challenge")
        // §5.1.3 step 10: an empty list means ES256 and RS256. Entries of unknown type are skipped.
        let params = raw.pubKeyCredParams.filter { $0.type == "public-key" }.map(\.alg)
        algorithms = raw.pubKeyCredParams.isEmpty ? [-7, -257] : params
        var excluded: [[UInt8]] = []
        for d in raw.excludeCredentials ?? [] where d.type == "public-key" {
            excluded.append(try ClientEncoding.decodeBase64url(d.id, field: "excludeCredentials[].id"))
        }
        excludeCredentials = excluded
        // §5.4.4: residentKey wins when it is a known value; otherwise requireResidentKey decides.
        let selection = raw.authenticatorSelection
        if let rk = selection?.residentKey, ["required", "preferred", "discouraged"].contains(rk) {
            residentKey = rk
        } else {
            residentKey = selection?.requireResidentKey == true ? "required" : "discouraged"
        }
        userVerification = Self.knownUserVerification(selection?.userVerification)
        attestation = raw.attestation ?? "none"
        credProps = raw.extensions?.credProps ?? false
    }

    static func knownUserVerification(_ value: String?) -> String {
        guard let value, ["required", "preferred", "discouraged"].contains(value) else { return "preferred" }
        return value
    }
}

/// The request options as the client reads them from `PublicKeyCredentialRequestOptionsJSON`
/// (W3C WebAuthn Level 3 §5.1.9 `parseRequestOptionsFromJSON`).
///
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
public struct ClientRequestOptions: Sendable, Hashable {
    public var challenge: [UInt8]
    public var rpId: String?
    public var allowCredentials: [[UInt8]]
    public var userVerification: String

    public init(json: some Collection<UInt8>) throws(VirtualAuthenticatorError) {
        let raw: RequestJSON
        do {
            raw = try JSONDecoder().decode(RequestJSON.self, from: Data(json))
        } catch {
            throw VirtualAuthenticatorError(
                .invalidOptions, detail: "request options are not PublicKeyCredentialRequestOptionsJSON")
        }
        challenge = try ClientEncoding.decodeBase64url(raw.challenge, field: "challenge")
        rpId = raw.rpId
        var allowed: [[UInt8]] = []
        for d in raw.allowCredentials ?? [] where d.type == "public-key" {
            allowed.append(try ClientEncoding.decodeBase64url(d.id, field: "allowCredentials[].id"))
        }
        allowCredentials = allowed
        userVerification = ClientCreationOptions.knownUserVerification(raw.userVerification)
    }
}

// The JSON shapes, decoded leniently about unknown members (a browser ignores them) and strictly about types.
private struct CreationJSON: Decodable {
    struct RP: Decodable {
        var id: String?
        var name: String
    }
    struct User: Decodable {
        var id: String
        var name: String
        var displayName: String
    }
    struct Param: Decodable {
        var type: String
        var alg: Int
    }
    struct Selection: Decodable {
        var authenticatorAttachment: String?
        var residentKey: String?
        var requireResidentKey: Bool?
        var userVerification: String?
    }
    var rp: RP
    var user: User
    var challenge: String
    var pubKeyCredParams: [Param]
    var timeout: UInt32?
    var excludeCredentials: [Descriptor]?
    var authenticatorSelection: Selection?
    var hints: [String]?
    var attestation: String?
    var attestationFormats: [String]?
    var extensions: Extensions?
}

private struct RequestJSON: Decodable {
    var challenge: String
    var timeout: UInt32?
    var rpId: String?
    var allowCredentials: [Descriptor]?
    var userVerification: String?
    var hints: [String]?
    var extensions: Extensions?
}

private struct Descriptor: Decodable {
    var type: String
    var id: String
    var transports: [String]?
}

private struct Extensions: Decodable {
    var credProps: Bool?
}
