// Raw ES256 verify throughput with swift-crypto, on every core, for a fixed time: the figure that
// scripts/bench-server puts beside complete sign-ins per second. Each thread verifies the same P-256 / SHA-256
// signature over a 69-byte message (the size of authenticatorData || SHA-256(clientDataJSON) in a sign-in) with
// `P256.Signing.PublicKey.isValidSignature(_:for:)`, the call the WebAuthn library makes for ES256
// (Sources/WebAuthn/COSEKey.swift). Key and signature are parsed once: this counts the verify alone.
//
//     ES256VerifyThroughput [--seconds 5] [--threads <cores>]
// prints: threads=N seconds=S verifies=V verifies_per_second=R cpu_seconds=C cpu_us_per_verify=U
// (CPU time of the process: unlike the rate, it hardly moves when other processes share the cores).
import Crypto
import Foundation
import Synchronization

func option(_ name: String, default value: Double) -> Double {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name) else { return value }
    guard index + 1 < arguments.count, let parsed = Double(arguments[index + 1]), parsed > 0 else {
        FileHandle.standardError.write(Data("usage: ES256VerifyThroughput [--seconds S] [--threads N]\n".utf8))
        exit(2)
    }
    return parsed
}

func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Per-thread verify counts (-1 for a thread that saw a verify fail), shared by the threads.
final class Counts: Sendable {
    let values = Mutex<[Int]>([])
}

func run() throws {
    let seconds = min(option("--seconds", default: 5), 60)
    let threadCount = Int(min(option("--threads", default: Double(ProcessInfo.processInfo.activeProcessorCount)), 256))

    let privateKey = P256.Signing.PrivateKey()
    let publicKey = privateKey.publicKey
    let message = Data((0..<69).map { _ in UInt8.random(in: 0...255) })
    let signature = try privateKey.signature(for: message)
    guard publicKey.isValidSignature(signature, for: message),
        !publicKey.isValidSignature(signature, for: message.dropFirst())
    else {
        FileHandle.standardError.write(Data("ES256VerifyThroughput: self-check failed\n".utf8))
        exit(1)
    }

    let counts = Counts()
    let finished = DispatchGroup()
    let cpuStart = processCPUSeconds()
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds * 1e9)
    for _ in 0..<threadCount {
        finished.enter()
        let thread = Thread {
            var count = 0
            var valid = true
            // Check the clock every 64 verifies (a verify takes tens of microseconds).
            while DispatchTime.now().uptimeNanoseconds < deadline {
                for _ in 0..<64 { valid = publicKey.isValidSignature(signature, for: message) && valid }
                count += 64
            }
            let total = valid ? count : -1
            counts.values.withLock { $0.append(total) }
            finished.leave()
        }
        thread.start()
    }
    finished.wait()
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let cpu = processCPUSeconds() - cpuStart
    let perThread = counts.values.withLock { $0 }
    guard !perThread.contains(-1) else {
        FileHandle.standardError.write(Data("ES256VerifyThroughput: a verify failed\n".utf8))
        exit(1)
    }
    let verifies = perThread.reduce(0, +)
    print(
        "threads=\(threadCount) seconds=\(String(format: "%.2f", elapsed)) verifies=\(verifies)",
        "verifies_per_second=\(String(format: "%.0f", Double(verifies) / elapsed))",
        "cpu_seconds=\(String(format: "%.3f", cpu)) cpu_us_per_verify=\(String(format: "%.2f", cpu / Double(max(verifies, 1)) * 1e6))"
    )
}

try run()
