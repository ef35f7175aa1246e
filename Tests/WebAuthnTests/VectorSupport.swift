import Foundation
import Testing

@testable import WebAuthn

/// Loading test vectors from the `Vectors` resource folder.
enum Vectors {
    static var directory: URL {
        guard let url = Bundle.module.url(forResource: "Vectors", withExtension: nil) else {
            Issue.record("Vectors resource folder missing")
            return URL(fileURLWithPath: "/nonexistent")
        }
        return url
    }

    static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(relativePath))
    }

    static func names(in folder: String, prefix: String = "") -> [String] {
        let url = folder.isEmpty ? directory : directory.appendingPathComponent(folder)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return files.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
    }
}

func b64(_ s: String) throws -> [UInt8] { try Base64URL.decode(s) }

func hexBytes(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.makeIterator()
    while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16) ?? 0) }
    return out
}

/// Expects `body` to fail with a ``WebAuthnError`` of `code` (and, if given, a step starting with `step`), and
/// returns the error for further checks.
@discardableResult
func expectError(
    _ code: WebAuthnError.Code, step: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> WebAuthnError? {
    do {
        try body()
        Issue.record("expected \(code), but it succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as WebAuthnError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        if let step { #expect(error.step.hasPrefix(step), "got step \(error.step)", sourceLocation: sourceLocation) }
        return error
    } catch {
        Issue.record("expected WebAuthnError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// ``expectError(_:step:sourceLocation:_:)`` for ceremonies that are `async` (registration).
@discardableResult
func expectError(
    _ code: WebAuthnError.Code, step: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> WebAuthnError? {
    do {
        try await body()
        Issue.record("expected \(code), but it succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as WebAuthnError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        if let step { #expect(error.step.hasPrefix(step), "got step \(error.step)", sourceLocation: sourceLocation) }
        return error
    } catch {
        Issue.record("expected WebAuthnError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
