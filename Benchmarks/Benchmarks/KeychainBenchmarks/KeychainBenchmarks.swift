import Benchmark
import Crypto
import CryptoExtras
import Foundation
import Keychain

// The keychain's three costs a person notices, each beside the raw operation it is built on, in one run:
//
//   unlock:     Keychain.open with the passphrase (scrypt N=2^17, r=8, p=1, then the file key and body)
//               beside raw scrypt with the same parameters
//   assertion:  Keychain.signIn from PublicKeyCredentialRequestOptionsJSON to AuthenticationResponseJSON (origin
//               and RP ID checks, client data, authenticator data, ES256 signature) beside a raw ES256 signature
//               over the same number of bytes
//   sync:       10,000 items (passwords) pushed by one device, and pulled, checked against the manifest and
//               written by a recovering device, beside raw AES-256-GCM sealing and opening of 10,000 plaintexts of
//               the same size
//
// Everything runs in a temporary directory; the sync server is the in-memory one (no network, no database).

let itemCount = 10_000
let passphrase = "correct horse battery staple"
// The sync benchmarks' vaults open with cheap scrypt parameters so that setting up each iteration stays cheap;
// the unlock benchmark uses the real ones.
let fastKDF = ScryptParameters(logN: 10, r: 8, p: 1)
let fastPolicy = KDFPolicy(minimum: fastKDF)

func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "sesame-keychain-bench-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func password(_ i: Int) -> ItemContent {
    .password(
        Password(
            sites: ["site\(i).example.com"], username: "user\(i)@example.com",
            password: "pw-\(i)-" + String(repeating: "x", count: 16)))
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput],
        timeUnits: .microseconds,
        maxDuration: .seconds(5),
        maxIterations: 100_000
    )
    let slow = Benchmark.Configuration(
        metrics: [.wallClock, .throughput], timeUnits: .milliseconds, warmupIterations: 1, maxDuration: .seconds(20),
        maxIterations: 10)

    // MARK: Unlock

    let unlockDirectory = VaultDirectory(path: temporaryDirectory())
    _ = try! Keychain.create(in: unlockDirectory, passphrase: passphrase, deviceName: "bench")
    let salt = Array(repeating: UInt8(7), count: 32)

    Benchmark("raw scrypt N=2^17 r=8 p=1", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(
                try KDF.Scrypt.deriveKey(
                    from: Array(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: 1 << 17, blockSize: 8,
                    parallelism: 1))
        }
    }

    Benchmark("unlock (Keychain.open with passphrase)", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try Keychain.open(unlockDirectory, passphrase: passphrase))
        }
    }

    // MARK: Assertion

    let passkeyDirectory = VaultDirectory(path: temporaryDirectory())
    // A Keychain is not Sendable (it holds the directory's lock and mutable state); each benchmark closure runs
    // alone, on one thread at a time.
    nonisolated(unsafe) let passkeys = try! Keychain.create(
        in: passkeyDirectory, passphrase: passphrase, deviceName: "bench", parameters: fastKDF, policy: fastPolicy
    ).0
    let suffixes = try! PublicSuffixList(bytes: Array("com\nnet\norg\n".utf8))
    let creation = """
        {"rp":{"id":"example.com","name":"Example"},"user":{"id":"AQIDBAUGBwgJCgsMDQ4PEA","name":"alice@example.com",\
        "displayName":"Alice"},"challenge":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",\
        "pubKeyCredParams":[{"type":"public-key","alg":-7}],"authenticatorSelection":{"residentKey":"required",\
        "userVerification":"preferred"}}
        """
    _ = try! passkeys.createPasskey(
        optionsJSON: Array(creation.utf8), origin: "https://example.com", suffixes: suffixes)
    let request = Array(
        """
        {"challenge":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","rpId":"example.com","userVerification":"preferred"}
        """.utf8)
    let signingKey = P256.Signing.PrivateKey()
    // What an ES256 assertion signs: authenticator data (37 bytes) || SHA-256(client data) (32 bytes).
    let signed = Data(repeating: 0x5a, count: 37 + 32)

    Benchmark("raw ES256 sign (69 bytes)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try signingKey.signature(for: signed))
        }
    }

    Benchmark("assertion (Keychain.signIn, ES256)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try passkeys.signIn(optionsJSON: request, origin: "https://example.com", suffixes: suffixes))
        }
    }

    // MARK: Sync of 10,000 items

    let sourceDirectory = VaultDirectory(path: temporaryDirectory())
    let recoveryKey: RecoveryKey
    do {
        // Released at the end of the scope, with the directory's lock.
        let (source, key) = try! Keychain.create(
            in: sourceDirectory, passphrase: passphrase, deviceName: "source", parameters: fastKDF, policy: fastPolicy)
        for i in 0..<itemCount { try! source.add(password(i)) }
        try! source.save()
        recoveryKey = key
    }
    let plaintextSize = 120
    let plaintexts = (0..<itemCount).map { _ in [UInt8](repeating: 0x41, count: plaintextSize) }
    let aesKey = SymmetricKey(size: .bits256)

    Benchmark("raw AES-256-GCM seal + open of \(itemCount) × \(plaintextSize) bytes", configuration: slow) {
        benchmark in
        for _ in benchmark.scaledIterations {
            for plaintext in plaintexts {
                let box = try AES.GCM.seal(plaintext, using: aesKey)
                blackHole(try AES.GCM.open(box, using: aesKey))
            }
        }
    }

    Benchmark("sync push of \(itemCount) items (first sync)", configuration: slow) { benchmark async throws in
        for _ in benchmark.scaledIterations {
            // Not saved: the file keeps its 10,000 unsynced items for the next iteration.
            let keychain = try Keychain.open(sourceDirectory, passphrase: passphrase, policy: fastPolicy)
            let server = InMemorySyncTransport()
            benchmark.startMeasurement()
            blackHole(try await keychain.sync(with: server))
            benchmark.stopMeasurement()
        }
    }

    Benchmark("sync pull of \(itemCount) items (recovery onto a new device)", configuration: slow) {
        benchmark async throws in
        // A server holding the vault with its 10,000 items (not measured).
        let filled = InMemorySyncTransport()
        _ = try await Keychain.open(sourceDirectory, passphrase: passphrase, policy: fastPolicy).sync(with: filled)
        for _ in benchmark.scaledIterations {
            let server = InMemorySyncTransport()
            server.restore(filled.snapshot)
            let directory = VaultDirectory(path: temporaryDirectory())
            benchmark.startMeasurement()
            let (keychain, _) = try await Keychain.recover(
                in: directory, recoveryKey: recoveryKey, passphrase: passphrase, deviceName: "new",
                transport: server, parameters: fastKDF, policy: fastPolicy)
            benchmark.stopMeasurement()
            precondition(keychain.items.count == itemCount)
            try? FileManager.default.removeItem(atPath: directory.path)
        }
    }
}
