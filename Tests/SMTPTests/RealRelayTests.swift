import Foundation
import Testing

@testable import SMTP

/// The client against a real SMTP server no one here wrote: aiosmtpd (PyPI), started by `Resources/relay.py` on
/// loopback with its own CA, STARTTLS or TLS from the first byte, and AUTH required.
final class RealRelay: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let port: Int
    let caPEM: [UInt8]
    let out: URL

    init(mode: String, auth: String = "sesame:correct horse") throws {
        out = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-relay-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let script = Bundle.module.url(forResource: "relay", withExtension: "py", subdirectory: "Resources")!
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--mode", mode, "--auth", auth, "--out", out.path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The first line says where it listens; EOF first means it could not start (aiosmtpd missing?).
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 { line.append(byte) }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        guard words.count == 3, words[0] == "READY", let port = Int(words[1]) else {
            process.terminate()
            throw RelayUnavailable()
        }
        self.port = port
        caPEM = Array(try Data(contentsOf: URL(fileURLWithPath: String(words[2]))))
    }

    struct RelayUnavailable: Error, CustomStringConvertible {
        var description: String {
            "Tests/SMTPTests/Resources/relay.py did not start: python3 with aiosmtpd and cryptography (PyPI) is required; scripts/test installs them"
        }
    }

    /// The mails it accepted: envelope sender, recipients, and the message.
    func received() throws -> [(from: String, to: String, message: String)] {
        try FileManager.default.contentsOfDirectory(atPath: out.path).sorted().map { name in
            let text = try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8)
            let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
            return (String(lines[0]), String(lines[1]), String(lines[2]))
        }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// Whether the relay can start: python3 with aiosmtpd. Under `scripts/test` (which installs them and sets
/// `SESAME_TEST_REQUIRE_COMPONENTS`) the suite always runs, so a missing package fails it instead of skipping it.
let relayAvailable: Bool = {
    if ProcessInfo.processInfo.environment["SESAME_TEST_REQUIRE_COMPONENTS"] != nil { return true }
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    probe.arguments = ["python3", "-c", "import aiosmtpd, cryptography"]
    probe.standardOutput = FileHandle.nullDevice
    probe.standardError = FileHandle.nullDevice
    guard (try? probe.run()) != nil else { return false }
    probe.waitUntilExit()
    return probe.terminationStatus == 0
}()

@Suite(
    .serialized,
    .enabled(if: relayAvailable, "python3 with aiosmtpd and cryptography (PyPI) is needed; scripts/test installs them")
)
struct RealRelayTests {
    let mail = MailMessage(
        from: try! MailAddress("sesame@example.org"), fromName: "Sesame", to: [try! MailAddress("lin@example.net")],
        subject: "패스키가 추가되었습니다", text: "A passkey was added.\n.\nIf it was not you, sign in.",
        html: "<p>A passkey was added.</p>", messageID: "r1@sesame.example", date: Date(),
        listUnsubscribe: "https://sesame.example/account")

    func configuration(_ relay: RealRelay, _ security: SMTPConfiguration.Security) -> SMTPConfiguration {
        SMTPConfiguration(
            host: "localhost", port: relay.port, security: security, username: "sesame", password: "correct horse",
            caCertificatesPEM: relay.caPEM, timeout: .seconds(20))
    }

    @Test(arguments: [("starttls", SMTPConfiguration.Security.startTLS), ("implicit", .implicitTLS)])
    func aMailIsDeliveredOverTLSWithAuthentication(_ mode: String, _ security: SMTPConfiguration.Security)
        async throws
    {
        let relay = try RealRelay(mode: mode)
        defer { relay.stop() }
        let reply = try await SMTPClient(configuration(relay, security)).send(mail)
        #expect(reply.code == 250 && reply.lines == ["2.0.0 Ok: queued as T001"])
        let received = try relay.received()
        #expect(received.count == 1)
        #expect(received.first?.from == "sesame@example.org" && received.first?.to == "lin@example.net")
        let message = received.first?.message ?? ""
        #expect(message.contains("Message-ID: <r1@sesame.example>"))
        #expect(message.contains("List-Unsubscribe-Post: List-Unsubscribe=One-Click"))
        // The text part arrives whole, its lone period line included (dot-stuffing undone by the relay).
        let base64 = message.components(separatedBy: "\r\n\r\n")[2].components(separatedBy: "\r\n")
            .prefix { !$0.hasPrefix("--") }.joined()
        #expect(String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self) == mail.text)
    }

    @Test func aRelayWhoseCertificateTheSystemDoesNotTrustIsRefusedBeforeCredentials() async throws {
        let relay = try RealRelay(mode: "starttls")
        defer { relay.stop() }
        var configuration = configuration(relay, .startTLS)
        configuration.caCertificatesPEM = nil
        await #expect(throws: SMTPError(.tlsFailed)) { try await SMTPClient(configuration).send(mail) }
        #expect(try relay.received().isEmpty)
    }

    @Test func theWrongPasswordIsRefusedAndNothingIsSent() async throws {
        let relay = try RealRelay(mode: "implicit")
        defer { relay.stop() }
        var configuration = configuration(relay, .implicitTLS)
        configuration.password = "wrong"
        await #expect(throws: SMTPError(.authenticationFailed)) { try await SMTPClient(configuration).send(mail) }
        #expect(try relay.received().isEmpty)
    }
}
