import CBOR
import Crypto
import Foundation
import SesameBytes
import X509

/// How `android-safetynet` statements are accepted. The format is deprecated (W3C WebAuthn §8.5 note; Google
/// turned the SafetyNet Attestation API off in 2025), so no value of this type is set by default and every
/// SafetyNet statement is then refused with `.safetyNetNotEnabled`.
public struct SafetyNetPolicy: Sendable, Hashable {
    /// The oldest response accepted: `timestampMs` may be at most this many seconds before the verification time.
    public var maximumAge: TimeInterval
    /// How far `timestampMs` may be after the verification time (clock differences between Google and the RP).
    public var maximumClockSkew: TimeInterval
    /// Require `ctsProfileMatch` (the device passed Android compatibility testing). On by default, as Google
    /// recommended for attestation; off requires only `basicIntegrity`.
    public var requireCTSProfileMatch: Bool

    public init(maximumAge: TimeInterval = 60, maximumClockSkew: TimeInterval = 10, requireCTSProfileMatch: Bool = true)
    {
        self.maximumAge = maximumAge
        self.maximumClockSkew = maximumClockSkew
        self.requireCTSProfileMatch = requireCTSProfileMatch
    }
}

/// The `android-safetynet` format (W3C WebAuthn Level 3 §8.5, deprecated): Google Play Services' SafetyNet
/// Attestation API signs a JWS whose nonce is SHA-256(authenticatorData ‖ clientDataHash).
///
/// CDDL: `safetynetStmtFormat = { ver: text, response: bytes }`; `response` is the UTF-8 JWS (``CompactJWS``) with
/// the payload `{ "nonce": base64, "timestampMs": int, "ctsProfileMatch": bool, "basicIntegrity": bool, ... }`.
///
/// Verification procedure (§8.5 and Google's SafetyNet documentation, numbered; errors carry the number):
/// 0. The relying party enabled SafetyNet (``AttestationTrust/safetyNet``).
/// 1. `attStmt` has the syntax above; `ver` is a non-empty version string.
/// 2. `response` is a valid JWS whose signature verifies with its `x5c` leaf.
/// 3. `nonce` equals the base64 (standard alphabet, padded) of SHA-256(authenticatorData ‖ clientDataHash).
/// 4. The response came from SafetyNet: the leaf certificate is issued to `attest.android.com` (subjectAltName
///    dNSName, or the subject CN when there is no subjectAltName), and (6) the chain leads to the caller's anchors.
/// 5. `ctsProfileMatch` is true (``SafetyNetPolicy/requireCTSProfileMatch``; otherwise `basicIntegrity`), and
///    `timestampMs` is within ``SafetyNetPolicy/maximumAge`` before, or ``SafetyNetPolicy/maximumClockSkew``
///    after, the verification time (the injected clock, never the system's).
/// 6. The result is `basic` with the JWS `x5c` as trust path.
public struct SafetyNetAttestationVerifier: AttestationStatementVerifier {
    public let format = "android-safetynet"
    public var chainRules: AttestationChainRules
    /// The longest `response` accepted (real responses are 5 to 10 kB).
    public static let maximumResponseLength = 64 * 1024
    /// The hostname of SafetyNet's signing certificate.
    public static let hostname = "attest.android.com"

    public init(chainRules: AttestationChainRules = .rfc5280) {
        self.chainRules = chainRules
    }

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        // Step 0: deprecated, refused unless enabled.
        guard let policy = trust.safetyNet else {
            throw WebAuthnError(
                .safetyNetNotEnabled, step: step("8.5", "step 0: policy"),
                detail: "android-safetynet is deprecated and not enabled (AttestationTrust.safetyNet)")
        }

        // Step 1: syntax.
        let syntax = step("8.5", "step 1: attStmt")
        let fields = try AttestationStatement.fields(statement, allowed: ["ver", "response"], step: syntax)
        guard let ver = fields["ver"]?.string, !ver.isEmpty else {
            throw WebAuthnError(.invalidAttestationStatement, step: syntax, detail: "ver must be a non-empty string")
        }
        guard let responseBytes = fields["response"]?.bytes, !responseBytes.isEmpty else {
            throw WebAuthnError(.invalidAttestationStatement, step: syntax, detail: "response must be bytes")
        }

        // Step 2: the JWS and its signature.
        guard let text = String(validating: responseBytes, as: UTF8.self) else {
            throw WebAuthnError(
                .safetyNetResponseInvalid, step: step("8.5", "step 2: response"), detail: "response is not UTF-8")
        }
        let jws: CompactJWS
        do { jws = try CompactJWS(text, maximumLength: Self.maximumResponseLength) } catch {
            throw error.at(step("8.5", "step 2: response"))
        }
        guard jws.algorithm == .rs256 || jws.algorithm == .es256 else {
            throw WebAuthnError(
                .safetyNetResponseInvalid, step: step("8.5", "step 2: response"), detail: "unexpected JWS algorithm")
        }
        guard jws.signatureIsValid else {
            throw WebAuthnError(.attestationSignatureInvalid, step: step("8.5", "step 2: response signature"))
        }
        let payload = try Self.payload(jws.payload, step: step("8.5", "step 2: response payload"))

        // Step 3: nonce.
        let expected = Data(SHA256.hash(data: authenticatorData.bytes + clientDataHash)).base64EncodedString()
        guard ConstantTime.equal(Array(payload.nonce.utf8), Array(expected.utf8)) else {
            throw WebAuthnError(.attestationNonceMismatch, step: step("8.5", "step 3: nonce"))
        }

        // Step 4: issued to attest.android.com.
        try Self.checkHostname(jws.signer, step: step("8.5", "step 4: attestation certificate"))

        // Step 5: device integrity and freshness.
        if policy.requireCTSProfileMatch {
            guard payload.ctsProfileMatch == true else {
                throw WebAuthnError(.safetyNetCTSProfileMismatch, step: step("8.5", "step 5: ctsProfileMatch"))
            }
        } else {
            guard payload.basicIntegrity == true else {
                throw WebAuthnError(.safetyNetCTSProfileMismatch, step: step("8.5", "step 5: basicIntegrity"))
            }
        }
        let time = trust.verificationTime ?? now
        let issued = Date(timeIntervalSince1970: TimeInterval(payload.timestampMs) / 1000)
        guard issued >= time.addingTimeInterval(-policy.maximumAge),
            issued <= time.addingTimeInterval(policy.maximumClockSkew)
        else {
            throw WebAuthnError(
                .safetyNetTimestampInvalid, step: step("8.5", "step 5: timestampMs"),
                detail: "the response is not within \(Int(policy.maximumAge)) s of the verification time")
        }

        // Step 6: Basic, trust path = the JWS x5c.
        let x5c: [Certificate]
        do { x5c = try jws.chain() } catch {
            throw WebAuthnError(.attestationCertificateInvalid, step: step("8.5", "step 6: x5c"), detail: error.detail)
        }
        let chain = try await AttestationCertificateChain.validatedPath(
            x5c, trust: trust, now: now, rules: chainRules, format: format)
        return AttestationResult(
            format: format, type: .basic, trustPath: x5c, chainVerified: chain != nil,
            verifiedChain: chain ?? [])
    }

    /// The payload members the verification uses.
    struct Payload: Decodable {
        let nonce: String
        let timestampMs: Int64
        let ctsProfileMatch: Bool?
        let basicIntegrity: Bool?
    }

    static func payload(_ bytes: [UInt8], step: String) throws(WebAuthnError) -> Payload {
        guard JSONMemberNames.topLevel(bytes) != nil,
            let payload = try? JSONDecoder().decode(Payload.self, from: Data(bytes))
        else {
            throw WebAuthnError(
                .safetyNetResponseInvalid, step: step,
                detail: "the payload is not a JSON object with nonce and timestampMs")
        }
        return payload
    }

    /// The leaf must be issued to `attest.android.com`.
    static func checkHostname(_ certificate: Certificate, step: String) throws(WebAuthnError) {
        let names: SubjectAlternativeNames?
        do { names = try certificate.extensions.subjectAlternativeNames } catch {
            throw WebAuthnError(.attestationCertificateInvalid, step: step, detail: "malformed subjectAltName")
        }
        if let names {
            let dnsNames = names.compactMap { name -> String? in
                if case .dnsName(let dns) = name { return dns }
                return nil
            }
            guard dnsNames.contains(hostname) else {
                throw WebAuthnError(
                    .attestationCertificateInvalid, step: step, detail: "the certificate is not for \(hostname)")
            }
            return
        }
        let commonNames = certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
            .map { String($0.value) ?? "" }
        guard commonNames == [hostname] else {
            throw WebAuthnError(
                .attestationCertificateInvalid, step: step, detail: "the certificate is not for \(hostname)")
        }
    }
}
