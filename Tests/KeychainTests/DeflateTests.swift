import Crypto
import Foundation
import Testing
import WebAuthn

@testable import Keychain

/// DEFLATE for CXF's `fido2Extensions.largeBlob`: the keychain writes stored blocks and reads what other
/// exporters write. The compressed vectors were made with Python's zlib (raw DEFLATE, `compressobj(9, DEFLATED,
/// -15)`; `Z_FIXED` for the first), which is the reference inflater here.
@Suite struct DeflateTests {
    /// zlib, fixed Huffman codes (BTYPE 01), of "hello, hello, hello large blob".
    static let fixed = "y0jNycnXUchAohRyEovSUxWScvKTAA=="
    /// zlib, dynamic Huffman codes (BTYPE 10), of 1,800 bytes of skewed letters (Python's random.Random(33)):
    /// SHA-256 b40cac2c…ed78.
    static let dynamic =
        "JZVbruQgDES3wtYsxRKWkC2B2X+foucj00mA1Mt1V7edPXvMmifNLWweH2n1tXtZe3n1NK7Tvgg9/Fz/yj2suiPHqbvTjvuJKG/fWX0G98PScoZxEx5V7V3DRldm1Z3ufdyuL+/uwZkrp47lV7rfBkKVH+P+2KiaAhPAbJ/t5h0ccTaH9R9SA9iGnxyxjFXWIZwdxQ9tiuHjdKfBM/tGJguyWQqEqNPJMp/ha7ouvL6eBwF6Q3FkBxo1kDjeWMyjWeIMhs/GLZQC2IMXesNrVPLh+4MrClcOoWERGphZXQ68Hvuy7HhgyO3cLflGd3FqnXoQEb79i+1ncOL9QLf5giAfQ93pjZT+rIPPjjwOoqgpqQHWso9N/qF2fgG00LZZMtY+Q6J1EAUz0Ur04baLVUOU+QboINbNkb17ftOA2x63YvRI1M71MtN5C9qn2PiBMsUO+lwdvsIsw4CfgMH+GZerzezMFfURmSQEWTaDKBRUgfGSh7YxjnQtAQw4haJi0GCJtL0vGwpT4XQhGL/Q0e/GQ+nOHlSEEJ9hxz3+ITfADMhsj6c2imKaowTLkTojS76bXiLo4zE6mi+kuCuu8WxcAMJiomxPdyK4IA6TrZCZ8d8KzQmxqsq6GRjzhXUeOTChzDiO9WSRpuc50zaN0OtDB8KLiauhtZoUR+zKzSixfK7aAdjehjnLB/wwE77Ah9pBErtcVnMn7HPlx6BZjOWTNz6HJFEY8+L6/aCETFsyQRkoNRgr63nVFxjFoAZ6DZTV4+Grh+Q6Sqv4c2JKE77luFRXQ48zNsSgc774MkQMSqITcJSdoxRzrDw6mHDQiuF8VeS5R9nB6Zo63/+TXK9LBt3m+pLMlvbXliyXbRN1qIFajGQWuE+LPhnEuNL8kIXUiaqd0NzYnIcs0A62CDyVxYAohygYl+ZJ5RAHVV7ZFJd9TbXw7J7LS5RTk0pGKhO4RwNb6ItggeSEnnlpxoRE4RF9wbAyzsBDiMlulc544/H4Z7971yAPrpabASVx81X6q04CqPDQIoRtj0D8qH+TEyRTr88z7Rj1+bFZlVmTXKsdkQvNmd/B34sXIOKuUfPNQzn2vfU861lLQ5Y6ul8FL439pCxZLsnV7/B7HkVv//+Z+UatudUYJYMjxRtJquF5aDUl4K9TU9At/+0qzri0W21CQ938H/fGQeKn+olGJf4hpDBjieqCWh2a93N/"
    static let dynamicDigest = "b40cac2cf38b9e2a33c5cfcc6850bb86770fcbecbbc58cb05007a3555e0fed78"

    static func bytes(_ base64: String) -> [UInt8] { [UInt8](Data(base64Encoded: base64)!) }
    static func hex(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test func zlibsFixedAndDynamicBlocksInflate() throws {
        let hello = try Deflate.inflate(Self.bytes(Self.fixed), maximumOutput: 2048)
        #expect(String(decoding: hello, as: UTF8.self) == "hello, hello, hello large blob")
        let long = try Deflate.inflate(Self.bytes(Self.dynamic), maximumOutput: 2048)
        #expect(long.count == 1800 && Self.hex(long) == Self.dynamicDigest)
        // One byte over the limit it is given is refused, not truncated.
        #expect(errorCode { _ = try Deflate.inflate(Self.bytes(Self.dynamic), maximumOutput: 1799) } == .invalidItem)
    }

    @Test(arguments: [0, 1, 2048, 70_000]) func storedBlocksRoundTrip(_ count: Int) throws {
        let data = SecureRandom.bytes(count)
        #expect(try Deflate.inflate(Deflate.stored(data), maximumOutput: count) == data)
    }

    @Test func badDataIsRefusedWithATypedError() {
        let fixed = Self.bytes(Self.fixed)
        let stored = Deflate.stored([1, 2, 3])
        var badCheck = stored
        badCheck[3] ^= 1  // NLEN is no longer LEN's complement
        for bad in [
            [], [0x07], Array(fixed.dropLast()), fixed + [0], badCheck, Array(stored.dropLast()),
            [0x03, 0x00, 0x00],  // a fixed block that ends at once, then a byte after the final block
            [0x06],  // BTYPE 11, reserved
        ] {
            #expect(errorCode { _ = try Deflate.inflate(bad, maximumOutput: 2048) } == .invalidItem, "\(bad)")
        }
    }

    /// A passkey's blob goes out in `fido2Extensions.largeBlob` and comes back the same; a blob another exporter
    /// compressed is read; a blob that does not inflate to its stated size fails that passkey only, and the vault
    /// is unchanged by a document that fails as a whole.
    @Test func aPasskeysLargeBlobTravelsInCXF() throws {
        let dir = TemporaryDirectory()
        let (source, _) = try makeVault(dir.sub("source"))
        let key = CredentialKey.generate(.es256)
        let blob = Array("a site's encrypted note".utf8) + SecureRandom.bytes(300)
        try source.add(
            .passkey(
                Passkey(
                    rpId: "blob.example", credentialId: SecureRandom.bytes(32), userHandle: SecureRandom.bytes(16),
                    userName: "bea", displayName: "Bea", algorithm: .es256, privateKey: key.rawPrivateKey,
                    largeBlob: blob)))
        let (json, _) = source.exportCXF(exporterRpId: "keychain.example")
        let text = String(decoding: json, as: UTF8.self)
        #expect(
            text.contains("\"uncompressedSize\":\(blob.count)") || text.contains("\"uncompressedSize\" : \(blob.count)")
        )
        let (target, _) = try makeVault(dir.sub("target"))
        #expect(try target.importCXF(json).importedCount == 1)
        guard case .passkey(let imported) = target.items.first?.content else {
            Issue.record("no passkey imported")
            return
        }
        #expect(imported.largeBlob == blob)

        // zlib's compressed blob, as another exporter writes it.
        let other = try Self.document(size: 1800, data: Base64URL.encode(Self.bytes(Self.dynamic)))
        let (third, _) = try makeVault(dir.sub("third"))
        #expect(try third.importCXF(other).importedCount == 1)
        guard case .passkey(let fromZlib) = third.items.first?.content else {
            Issue.record("no passkey imported")
            return
        }
        #expect(Self.hex(fromZlib.largeBlob ?? []) == Self.dynamicDigest)

        // The wrong size, or data that does not inflate: that passkey fails, nothing is added.
        for (size, data) in [(1799, Self.dynamic), (30, "AAAA"), (4096, Self.fixed)] {
            let bad = try Self.document(size: size, data: Base64URL.encode(Self.bytes(data)))
            let (vault, _) = try makeVault(dir.sub("bad-\(size)"))
            let report = try vault.importCXF(bad)
            #expect(report.importedCount == 0 && report.failures.count == 1, "\(size)")
            #expect(vault.items.isEmpty)
        }
    }

    /// A CXF document with one passkey whose `largeBlob` is `data` stated as `size` bytes.
    static func document(size: Int, data: String) throws -> [UInt8] {
        let key = CredentialKey.generate(.es256)
        let passkey: [String: Any] = [
            "type": "passkey", "credentialId": Base64URL.encode(SecureRandom.bytes(32)), "rpId": "blob.example",
            "username": "bea", "userDisplayName": "Bea", "userHandle": Base64URL.encode(SecureRandom.bytes(16)),
            "key": Base64URL.encode(try #require(key.pkcs8)),
            "fido2Extensions": ["largeBlob": ["uncompressedSize": size, "data": data]],
        ]
        let document: [String: Any] = [
            "version": ["major": 1, "minor": 0], "exporterRpId": "other.example", "exporterDisplayName": "Other",
            "timestamp": 1_800_000_000,
            "accounts": [
                [
                    "id": "YWNjb3VudA", "username": "", "email": "", "collections": [Any](),
                    "items": [["id": "aXRlbQ", "title": "blob.example", "credentials": [passkey]]],
                ]
            ],
        ]
        return [UInt8](try JSONSerialization.data(withJSONObject: document))
    }
}
