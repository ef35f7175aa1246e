import CBOR
import Foundation

/// The `none` format (W3C WebAuthn §8.7): the authenticator or client gave no attestation.
///
/// CDDL: `noneAttestation = ( fmt: "none", attStmt: emptyMap )`.
public struct NoneAttestationVerifier: AttestationStatementVerifier {
    public let format = "none"

    public init() {}

    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        guard let entries = statement.mapEntries, entries.isEmpty else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: step("8.7", "attStmt"), detail: "attStmt must be an empty map")
        }
        return AttestationResult(format: format, type: .none, trustPath: [], chainVerified: false)
    }
}
