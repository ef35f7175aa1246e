import Crypto
import Foundation
import SesameBytes

/// The client data a browser (or other WebAuthn client) collected and the authenticator signed over, parsed
/// from `clientDataJSON`, with the exact bytes kept.
///
/// W3C WebAuthn Level 3 §5.8.1:
/// ```webidl
/// dictionary CollectedClientData {
///     required DOMString           type;
///     required DOMString           challenge;
///     required DOMString           origin;
///     boolean                      crossOrigin;
///     DOMString                    topOrigin;
/// };
/// ```
/// Members other than these are ignored, as Level 3 requires (clients may add more; `tokenBinding` from Level 2 is
/// no longer processed).
public struct CollectedClientData: Sendable, Hashable {
    /// `webauthn.create` or `webauthn.get`.
    public let type: String
    /// The challenge as the client wrote it (base64url text). Compare with ``challengeMatches(_:)``.
    public let challenge: String
    public let origin: String
    public let crossOrigin: Bool?
    public let topOrigin: String?
    /// `clientDataJSON` exactly as received.
    public let bytes: [UInt8]
    /// SHA-256 of ``bytes``: what the authenticator signed together with the authenticator data.
    public let hash: [UInt8]

    /// The largest `clientDataJSON` accepted. Browsers produce a few hundred bytes.
    public static let maximumLength = 64 * 1024

    public enum CeremonyType: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    private struct Wire: Decodable {
        let type: String
        let challenge: String
        let origin: String
        let crossOrigin: Bool?
        let topOrigin: String?

        /// The members as ``JSONReader`` reads them, for client data of the usual shape; nil for anything else,
        /// which `JSONDecoder` then judges (`FuzzFastJSON` checks that both read the same).
        init?(fastPath bytes: [UInt8]) {
            guard case .object(let members) = JSONReader.read(bytes) else { return nil }
            var type: String?
            var challenge: String?
            var origin: String?
            var crossOrigin: Bool?
            var topOrigin: String?
            for member in members {
                switch (member.key, member.value) {
                case ("type", .string(let text)): type = text
                case ("challenge", .string(let text)): challenge = text
                case ("origin", .string(let text)): origin = text
                case ("crossOrigin", .bool(let flag)): crossOrigin = flag
                case ("crossOrigin", .null): crossOrigin = nil
                case ("topOrigin", .string(let text)): topOrigin = text
                case ("topOrigin", .null): topOrigin = nil
                case ("type", _), ("challenge", _), ("origin", _), ("crossOrigin", _), ("topOrigin", _): return nil
                default: continue
                }
            }
            guard let type, let challenge, let origin else { return nil }
            (self.type, self.challenge, self.origin, self.crossOrigin, self.topOrigin) =
                (type, challenge, origin, crossOrigin, topOrigin)
        }
    }

    /// Parses `clientDataJSON`. The bytes must be UTF-8 JSON with the three required string members.
    public init(bytes: some Collection<UInt8>) throws(WebAuthnError) {
        let raw = Array(bytes)
        guard raw.count <= Self.maximumLength else {
            throw WebAuthnError(.invalidJSON, detail: "clientDataJSON is longer than \(Self.maximumLength) bytes")
        }
        guard String(validating: raw, as: UTF8.self) != nil else {
            throw WebAuthnError(.invalidJSON, detail: "clientDataJSON is not UTF-8")
        }
        let wire: Wire
        if let read = Wire(fastPath: raw) {
            wire = read
        } else {
            do {
                wire = try JSONDecoder().decode(Wire.self, from: Data(raw))
            } catch {
                throw WebAuthnError(.invalidJSON, detail: "clientDataJSON is not a client data object")
            }
        }
        self.type = wire.type
        self.challenge = wire.challenge
        self.origin = wire.origin
        self.crossOrigin = wire.crossOrigin
        self.topOrigin = wire.topOrigin
        self.bytes = raw
        self.hash = Array(SHA256.hash(data: raw))
    }

    /// Whether the client data's challenge is the base64url encoding of `expected`, compared in constant time.
    /// Padded or standard-alphabet encodings never match.
    public func challengeMatches(_ expected: [UInt8]) -> Bool {
        guard let decoded = try? Base64URL.decode(challenge) else { return false }
        return ConstantTime.equal(decoded, expected)
    }
}

/// Whether the relying party accepts being used from inside a cross-origin iframe
/// (client data `crossOrigin: true` and/or `topOrigin`).
///
/// The default, ``reject``, fails any ceremony whose client data says `crossOrigin: true` or carries a
/// `topOrigin`. ``allow(topOrigins:)`` accepts cross-origin use; when the client data names a `topOrigin`, it must
/// be one of the listed origins (same matching rules as ``AllowedOrigins``).
public struct CrossOriginPolicy: Sendable, Hashable {
    public let allowsCrossOrigin: Bool
    public let topOrigins: AllowedOrigins?

    public static let reject = CrossOriginPolicy(allowsCrossOrigin: false, topOrigins: nil)

    /// Accepts cross-origin iframes embedded in one of `topOrigins`.
    public static func allow(topOrigins: [String]) throws(WebAuthnError) -> CrossOriginPolicy {
        CrossOriginPolicy(allowsCrossOrigin: true, topOrigins: try AllowedOrigins(topOrigins))
    }

    private init(allowsCrossOrigin: Bool, topOrigins: AllowedOrigins?) {
        self.allowsCrossOrigin = allowsCrossOrigin
        self.topOrigins = topOrigins
    }
}

extension CollectedClientData {
    /// Runs the client data steps shared by both ceremonies (type, challenge, origin, crossOrigin, topOrigin),
    /// reporting `steps` (the ceremony's step numbers for these five checks) in errors.
    func verify(
        type expectedType: CeremonyType, challenge expectedChallenge: [UInt8], origins: AllowedOrigins,
        crossOrigin policy: CrossOriginPolicy, steps: ClientDataSteps
    ) throws(WebAuthnError) {
        guard type == expectedType.rawValue else {
            throw WebAuthnError(.clientDataTypeMismatch, step: steps.type, detail: "expected \(expectedType.rawValue)")
        }
        guard !expectedChallenge.isEmpty, challengeMatches(expectedChallenge) else {
            throw WebAuthnError(.challengeMismatch, step: steps.challenge)
        }
        guard origins.contains(origin) else {
            throw WebAuthnError(.originNotAllowed, step: steps.origin)
        }
        if crossOrigin == true, !policy.allowsCrossOrigin {
            throw WebAuthnError(.crossOriginNotAllowed, step: steps.crossOrigin)
        }
        if let topOrigin {
            guard policy.allowsCrossOrigin else {
                throw WebAuthnError(.crossOriginNotAllowed, step: steps.topOrigin, detail: "topOrigin present")
            }
            guard let allowed = policy.topOrigins, allowed.contains(topOrigin) else {
                throw WebAuthnError(.topOriginNotAllowed, step: steps.topOrigin)
            }
        }
    }
}

/// Step labels for the client data checks of one ceremony.
struct ClientDataSteps {
    let type: String
    let challenge: String
    let origin: String
    let crossOrigin: String
    let topOrigin: String
}
