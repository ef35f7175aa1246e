import CBOR
import Foundation

/// The `compound` format (W3C WebAuthn Level 3 §8.9): several self-contained attestation statements over the same
/// authenticator data, in one registration.
///
/// CDDL:
/// ```
/// $$attStmtType //= ( fmt: "compound", attStmt: [2* nonCompoundAttStmt] )
/// nonCompoundAttStmt = { $$attStmtType } .within { fmt: text .ne "compound", * any => any }
/// ```
/// Verification procedure (§8.9; errors carry the step and the sub-statement's index):
/// 1. `attStmt` is an array of at least two maps `{fmt, attStmt}`, none of format `compound`.
/// 2. Each sub-statement is verified by the procedure of its format, with the same authenticator data, client data
///    hash and trust policy. §8.9 leaves "how many must verify" to the relying party: Sesame requires every one,
///    so a compound statement is never weaker than any of its parts.
/// 3. The result lists every sub-statement's result (``AttestationResult/components``), in order. Its own type,
///    trust path and chain are those of the first sub-statement whose chain was verified, else the first with a
///    certificate path, else the first one.
public struct CompoundAttestationVerifier: AttestationStatementVerifier {
    public let format = "compound"
    /// The most sub-statements accepted (the bound keeps hostile input cheap; real ones would have two or three).
    public static let maximumStatements = 8

    public init() {}

    /// Verifies with the standard registry's formats. Through ``AttestationFormatRegistry/verify(_:clientDataHash:trust:now:)``
    /// the registry that holds this verifier is used instead.
    public func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date
    ) async throws(WebAuthnError) -> AttestationResult {
        try await verify(
            statement: statement, authenticatorData: authenticatorData, clientDataHash: clientDataHash, trust: trust,
            now: now, registry: .standard)
    }

    func verify(
        statement: CBOR, authenticatorData: AuthenticatorData, clientDataHash: [UInt8],
        trust: AttestationTrust, now: Date, registry: AttestationFormatRegistry
    ) async throws(WebAuthnError) -> AttestationResult {
        // Step 1: syntax.
        let syntax = step("8.9", "step 1: attStmt")
        guard case .array(let items) = statement else {
            throw WebAuthnError(.invalidAttestationStatement, step: syntax, detail: "attStmt must be an array")
        }
        guard items.count >= 2, items.count <= Self.maximumStatements else {
            throw WebAuthnError(
                .invalidAttestationStatement, step: syntax,
                detail: "attStmt must hold 2 to \(Self.maximumStatements) statements")
        }
        var subStatements: [(format: String, statement: CBOR)] = []
        for (index, item) in items.enumerated() {
            guard let entries = item.mapEntries, entries.count == 2, let fmt = item[text: "fmt"]?.string,
                let inner = item[text: "attStmt"], inner.mapEntries != nil
            else {
                throw WebAuthnError(
                    .invalidAttestationStatement, step: syntax,
                    detail: "statement \(index) must be a map of exactly fmt (text) and attStmt (map)")
            }
            guard fmt != format else {
                throw WebAuthnError(
                    .invalidAttestationStatement, step: syntax, detail: "statement \(index) is itself compound")
            }
            subStatements.append((fmt, inner))
        }

        // Step 2: every sub-statement verifies.
        var components: [AttestationResult] = []
        for (index, sub) in subStatements.enumerated() {
            guard let verifier = registry.verifier(for: sub.format) else {
                let name =
                    AttestationFormatRegistry.registeredFormats.contains(sub.format)
                    ? sub.format : "an unregistered format"
                throw WebAuthnError(
                    .unsupportedAttestationFormat, step: step("8.9", "step 2: statement \(index)"),
                    detail: "fmt \(name) is not supported by this registry")
            }
            do {
                components.append(
                    try await verifier.verify(
                        statement: sub.statement, authenticatorData: authenticatorData,
                        clientDataHash: clientDataHash, trust: trust, now: now))
            } catch {
                let inner = error.step.isEmpty ? "" : " (\(error.step))"
                throw WebAuthnError(
                    error.code, step: step("8.9", "step 2: statement \(index)") + inner, detail: error.detail,
                    file: error.file, line: error.line)
            }
        }

        // Step 3: the result lists each.
        let primary =
            components.first(where: \.chainVerified) ?? components.first(where: { !$0.trustPath.isEmpty })
            ?? components[0]
        return AttestationResult(
            format: format, type: primary.type, trustPath: primary.trustPath, chainVerified: primary.chainVerified,
            verifiedChain: primary.verifiedChain, components: components)
    }
}
