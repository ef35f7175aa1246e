import Foundation
import WebAuthn

/// `JSONReader`, the sign-in bodies' fast path, against Foundation's `JSONDecoder`: the fast path may refuse what it
/// likes (JSONDecoder then judges), but what it reads must be JSON that JSONSerialization accepts, and an assertion
/// or client data it builds must be exactly what JSONDecoder decodes from the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    checkClientData(bytes)
    guard let value = JSONReader.read(bytes) else { return 0 }
    precondition(
        (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil,
        "JSONReader read what JSONSerialization refuses")
    if let fast = AuthenticationResponseJSON(fastPath: value) {
        let decoded = try? JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(bytes))
        precondition(decoded == fast, "the fast path and JSONDecoder read different assertions")
    }
    // The same for the body of a sign-in, whose assertion is its `credential` member.
    if let inner = value["credential"], let fast = AuthenticationResponseJSON(fastPath: inner) {
        struct Body: Decodable { let credential: AuthenticationResponseJSON }
        let decoded = try? JSONDecoder().decode(Body.self, from: Data(bytes))
        precondition(decoded?.credential == fast, "the fast path and JSONDecoder read different sign-in bodies")
    }
    return 0
}

/// `CollectedClientData` reads its usual shape with `JSONReader` and the rest with `JSONDecoder`: either way, it
/// must accept exactly the bytes that decode with JSONDecoder (being UTF-8), with the same members.
struct ClientDataWire: Decodable, Equatable {
    let type: String
    let challenge: String
    let origin: String
    let crossOrigin: Bool?
    let topOrigin: String?
}

func checkClientData(_ bytes: [UInt8]) {
    let parsed = try? CollectedClientData(bytes: bytes)
    let decoded =
        String(validating: bytes, as: UTF8.self) == nil
        ? nil : try? JSONDecoder().decode(ClientDataWire.self, from: Data(bytes))
    precondition((parsed == nil) == (decoded == nil), "client data accepted by one reader only")
    if let parsed, let decoded {
        precondition(
            ClientDataWire(
                type: parsed.type, challenge: parsed.challenge, origin: parsed.origin,
                crossOrigin: parsed.crossOrigin, topOrigin: parsed.topOrigin) == decoded,
            "client data read differently")
    }
}
