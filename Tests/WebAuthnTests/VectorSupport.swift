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

/// The real-authenticator corpus: the copies in `Vectors/webauthn-real/`, plus the cases read in place from the
/// project's shared corpus (`../shared/corpus/webauthn-real/` beside the repository, or `$SESAME_SHARED_CORPUS`).
/// Cases whose only source is under a copyleft license (kanidm/webauthn-rs, MPL-2.0) stay out of this repository
/// and are read there; NOTICE lists which. When the shared corpus is absent they are left out and
/// `RealCorpusPresenceTests` reports the skip.
enum RealCorpus {
    /// File-name prefixes of the cases read in place.
    static let inPlacePrefixes = ["webauthn-rs-"]

    static var sharedDirectory: URL? {
        let configured = ProcessInfo.processInfo.environment["SESAME_SHARED_CORPUS"].map { URL(fileURLWithPath: $0) }
        // #filePath is <repository>/Tests/WebAuthnTests/VectorSupport.swift; the shared folder is beside the repository.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let beside = repository.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        let directory = (configured ?? beside).appendingPathComponent("webauthn-real")
        return FileManager.default.fileExists(atPath: directory.path) ? directory : nil
    }

    /// Every case file: name → URL (a copy here wins over the shared file of the same name).
    static var files: [String: URL] {
        var files: [String: URL] = [:]
        if let shared = sharedDirectory {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: shared.path)) ?? []
            where name.hasSuffix(".json") && inPlacePrefixes.contains(where: name.hasPrefix) {
                files[name] = shared.appendingPathComponent(name)
            }
        }
        let local = Vectors.directory.appendingPathComponent("webauthn-real")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: local.path)) ?? []
        where name.hasSuffix(".json") {
            files[name] = local.appendingPathComponent(name)
        }
        return files
    }

    static var names: [String] { files.keys.sorted() }

    /// Why a test that needs a case read in place did not run.
    static let absentReason: Comment =
        "the shared corpus (../shared/corpus or SESAME_SHARED_CORPUS) is absent: this test needs webauthn-rs cases read in place"

    static func data(_ name: String) throws -> Data {
        guard let url = files[name] else { throw CocoaError(.fileNoSuchFile) }
        return try Data(contentsOf: url)
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
