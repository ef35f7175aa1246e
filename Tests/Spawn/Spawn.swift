import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program for the tests without Foundation's `Process`: on Linux with Swift 6.3.1, `Process.run()` can
/// crash the whole test process (a 256-byte over-read of `/proc/self/fd` entries in
/// `findMaximumOpenFromProcSelfFD()`, swift-corelibs-foundation pull request 5472), and a suite that holds many
/// descriptors and spawns often (the QR decoder, psql) met it. `posix_spawn` asks nothing of `/proc`.
public enum Spawn {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The finished program: exit status (a signal's number plus 128), standard output and standard error.
    public struct Result: Sendable {
        public let status: Int32
        public let output: Data
        public let error: Data
    }

    /// Runs `executable` (a path, or a name looked up in `PATH`) with `arguments`, standard input from /dev/null,
    /// and waits for it.
    public static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw Failure(description: "pipe: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errorFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, executable, &actions, nil, argv, environ)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            throw Failure(description: "posix_spawn \(executable): error \(spawned)")
        }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count > 0 {
                output.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(pipeEnds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = status & 0x7f == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: code, output: output, error: (try? Data(contentsOf: errorFile)) ?? Data())
    }
}
