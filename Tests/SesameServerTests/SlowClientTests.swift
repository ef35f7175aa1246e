import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
@testable import SesameCore

#if canImport(Glibc)
    import Glibc
#endif

/// The connection limits against slow clients (`idleTimeout`, `requestTimeout`; issue 13, `scripts/faults` "slow
/// and broken clients"), over real sockets: a head sent a byte at a time and a body trickled faster than the idle
/// timeout are both cut off, while a well-behaved request on the same server is answered.
@Suite struct SlowClientTests {
    /// A blocking loopback TCP socket with a receive timeout. Its calls block a thread, so tests make them through
    /// `offPool` (the server's handlers run on the cooperative pool they would otherwise starve).
    private final class RawSocket: @unchecked Sendable {
        let fd: Int32

        init(port: Int, receiveTimeout: Int = 6) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(connected == 0)
            var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        private var open = true

        func close() {
            if open { Glibc.close(fd) }
            open = false
        }

        deinit { close() }

        func send(_ text: String) {
            _ = text.utf8CString.withUnsafeBufferPointer {
                Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
            }
        }

        /// What arrives until the server closes the connection; nil when nothing ends it within the timeout.
        func readToEnd() -> String? {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count == 0 { return String(decoding: received, as: UTF8.self) }
                if count < 0 { return errno == ECONNRESET ? String(decoding: received, as: UTF8.self) : nil }
                received += buffer[0..<count]
            }
        }
    }

    private func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// A well-behaved request on a fresh connection is answered (given the time a loaded machine may take; only
    /// the slow clients above have to be cut off within the limits).
    private func healthAnswers(_ port: Int) async throws -> Bool {
        let socket = try RawSocket(port: port, receiveTimeout: 30)
        socket.send("GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        return await offPool { socket.readToEnd() }?.hasPrefix("HTTP/1.1 200") == true
    }

    private func server() -> TestServer {
        TestServer(.sqlite) { c in
            c.idleTimeout = 1
            c.requestTimeout = 2
        }
    }

    @Test func aHeadSentByteByByteIsClosedAfterTheIdleTimeout() async throws {
        try await server().app().test(.live) { client in
            let port = try #require(client.port)
            let slow = try RawSocket(port: port)
            slow.send("GET /health HTTP/1.1\r\nHost: loc")
            // Nothing more: the idle timeout (1 s) closes it well before the socket's own 6 s receive timeout.
            #expect(await offPool { slow.readToEnd() } == "")
            // The test client's own kept-alive connection may itself have been idle too long: a fresh one.
            #expect(try await healthAnswers(port))
        }
    }

    @Test func aBodyTrickledUnderTheIdleTimeoutIsCutOffByTheRequestTimeout() async throws {
        try await server().app().test(.live) { client in
            let port = try #require(client.port)
            let slow = try RawSocket(port: port)
            slow.send(
                "POST /api/sessions/password HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 1000\r\n\r\n{")
            // A byte every 0.4 s keeps the connection active for the idle timeout (1 s); the request timeout (2 s)
            // still ends it.
            let trickle = Task {
                for _ in 0..<25 {
                    try await Task.sleep(for: .milliseconds(400))
                    slow.send(" ")
                }
            }
            let answer = await offPool { slow.readToEnd() }
            trickle.cancel()
            #expect(answer != nil, "the trickled body kept its connection open past the request timeout")
            #expect(answer?.hasPrefix("HTTP/1.1 200") != true)
            // The test client's own kept-alive connection may itself have been idle too long: a fresh one.
            #expect(try await healthAnswers(port))
        }
    }

    // `maxConnections` is checked against the built binary by scripts/faults (slow-clients): HummingbirdTesting's
    // live mode rebuilds the server configuration from the address and drops the connection delegate.

    @Test func aCompleteRequestIsAnsweredWithinTheLimits() async throws {
        try await server().app().test(.live) { client in
            let port = try #require(client.port)
            #expect(try await healthAnswers(port))
        }
    }
}
