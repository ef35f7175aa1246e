import CBOR
import Crypto
import Foundation
import Testing
import X509

@testable import WebAuthn

// The `compound` format (W3C WebAuthn §8.9). No real authenticator emits it (browsers do not; see the corpus README),
// so, as peers do, the tests build compound statements from statements that verify on their own: a packed basic
// attestation and a tpm attestation over the same authenticator data.

@Suite struct CompoundAttestationTests {
    let ca: TestCA
    let tpm: TPMStatementBuilder
    var registration: TestRegistration { tpm.registration }
    let attestationKey = P256.Signing.PrivateKey()

    init() throws {
        ca = try TestCA.root("Sesame Test Compound Root")
        tpm = TPMStatementBuilder(ca: ca)
    }

    /// `{fmt, attStmt}` of a packed basic statement over the registration.
    func packedEntry(signature: [UInt8]? = nil) throws -> CBOR {
        let leaf = try ca.issue(
            key: attestationKey.publicKey,
            extensions: [try TestExtension.notCA(), TestExtension.aaguid(registration.aaguid)])
        let sig = try signature ?? Array(attestationKey.signature(for: registration.signedData).derRepresentation)
        return .map([
            CBORMapEntry("fmt", "packed"),
            CBORMapEntry(
                "attStmt",
                .map([
                    CBORMapEntry("alg", -7), CBORMapEntry("sig", .byteString(sig)),
                    CBORMapEntry("x5c", .array([.byteString(try der(leaf))])),
                ])),
        ])
    }

    func tpmEntry(_ builder: TPMStatementBuilder? = nil) throws -> CBOR {
        let object = try (builder ?? tpm).object()
        return .map([CBORMapEntry("fmt", "tpm"), CBORMapEntry("attStmt", object.statement)])
    }

    func compound(_ statements: [CBOR]) throws -> AttestationObject {
        try AttestationObject(
            bytes: CBOREncoder.encode(
                .map([
                    CBORMapEntry("fmt", "compound"), CBORMapEntry("attStmt", .array(statements)),
                    CBORMapEntry("authData", .byteString(registration.authenticatorData)),
                ])))
    }

    @Test func everySubStatementIsVerifiedAndListed() async throws {
        let object = try compound([try packedEntry(), try tpmEntry()])
        let result = try await registration.verify(object, anchors: [ca.certificate])
        #expect(result.format == "compound")
        #expect(result.components.map(\.format) == ["packed", "tpm"])
        #expect(result.components.map(\.type) == [.basic, .attCA])
        #expect(result.components.allSatisfy { $0.chainVerified })
        // The compound result takes the first verified sub-statement's type and chain.
        #expect(result.type == .basic && result.chainVerified)
        #expect(result.trustAnchor == ca.certificate, "\(result.verifiedChain.map(\.subject))")
    }

    /// One bad sub-statement refuses the whole statement, and the error says which one.
    @Test func oneFailingSubStatementRefusesAll() async throws {
        var broken = tpm
        broken.magic = 0
        let object = try compound([try packedEntry(), try tpmEntry(broken)])
        let error = await #expect(throws: WebAuthnError.self) { try await registration.verify(object) }
        #expect(error?.code == .tpmMagicInvalid)
        #expect(error?.step.hasPrefix("§8.9 compound: step 2: statement 1") == true, "\(String(describing: error))")

        let badSignature = try compound([
            try packedEntry(signature: [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]), try tpmEntry(),
        ])
        #expect(await failure { try await registration.verify(badSignature) } == .attestationSignatureInvalid)
    }

    @Test func syntaxRules() async throws {
        // Fewer than two statements.
        let one = try compound([try packedEntry()])
        #expect(await failure { try await registration.verify(one) } == .invalidAttestationStatement)
        // A nested compound statement.
        let nested = try compound([
            try packedEntry(), .map([CBORMapEntry("fmt", "compound"), CBORMapEntry("attStmt", .map([]))]),
        ])
        #expect(await failure { try await registration.verify(nested) } == .invalidAttestationStatement)
        // An entry with another member, or that is not a map.
        let extra = try compound([
            try packedEntry(),
            .map([CBORMapEntry("fmt", "none"), CBORMapEntry("attStmt", .map([])), CBORMapEntry("x", 1)]),
        ])
        #expect(await failure { try await registration.verify(extra) } == .invalidAttestationStatement)
        let notMap = try compound([try packedEntry(), .textString("none")])
        #expect(await failure { try await registration.verify(notMap) } == .invalidAttestationStatement)
        // An unknown sub-format.
        let unknown = try compound([
            try packedEntry(), .map([CBORMapEntry("fmt", "made-up"), CBORMapEntry("attStmt", .map([]))]),
        ])
        #expect(await failure { try await registration.verify(unknown) } == .unsupportedAttestationFormat)
        // Too many.
        let many = try compound(
            Array(repeating: try packedEntry(), count: CompoundAttestationVerifier.maximumStatements + 1))
        #expect(await failure { try await registration.verify(many) } == .invalidAttestationStatement)
    }

    /// Only `compound` may carry an array as attStmt.
    @Test func arrayStatementOnlyForCompound() throws {
        let bytes = CBOREncoder.encode(
            .map([
                CBORMapEntry("fmt", "packed"), CBORMapEntry("attStmt", .array([])),
                CBORMapEntry("authData", .byteString(registration.authenticatorData)),
            ]))
        #expect(throws: WebAuthnError(.invalidCBOR)) { _ = try AttestationObject(bytes: bytes) }
    }

    /// Sub-statements use the registry that holds the compound verifier: a registry without tpm refuses the tpm
    /// sub-statement.
    @Test func subStatementsUseTheRegistry() async throws {
        let registry = AttestationFormatRegistry(verifiers: [
            PackedAttestationVerifier(), CompoundAttestationVerifier(),
        ])
        let object = try compound([try packedEntry(), try tpmEntry()])
        #expect(
            await failure { try await registration.verify(object, registry: registry) } == .unsupportedAttestationFormat
        )
    }
}
