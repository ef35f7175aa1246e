import Crypto
import Foundation
import Synchronization
import Testing
import WebAuthn

@testable import Keychain

/// scrypt parameters that keep each test's unlock fast. The library's own minimum (N = 2^17) is tested on its
/// own; every other test passes this weaker policy explicitly, as a caller's code would.
let fastKDF = ScryptParameters(logN: 10, r: 8, p: 1)
let fastPolicy = KDFPolicy(minimum: fastKDF)
let passphrase = "correct horse battery staple"

/// A fresh, empty directory under the system temporary directory, removed when the test's value is dropped.
final class TemporaryDirectory: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "sesame-keychain-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> VaultDirectory { VaultDirectory(path: path + "/" + name) }
    var vault: VaultDirectory { sub("vault") }

    func files(in directory: VaultDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.sorted() ?? []
    }
}

/// A clock a test moves by hand.
final class ManualClock: KeychainClock {
    private let time: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { time = Mutex(start) }
    var now: Date { time.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

func makeVault(_ directory: VaultDirectory, name: String = "laptop", clock: any KeychainClock = ManualClock())
    throws(KeychainError) -> (Keychain, RecoveryKey)
{
    try Keychain.create(
        in: directory, passphrase: passphrase, deviceName: name, parameters: fastKDF, policy: fastPolicy, clock: clock)
}

func open(_ directory: VaultDirectory, passphrase: String? = passphrase, clock: any KeychainClock = ManualClock())
    throws(KeychainError) -> Keychain
{
    try Keychain.open(directory, passphrase: passphrase, policy: fastPolicy, clock: clock)
}

/// Unlocks the vault for 15 idle minutes, with user verification for the first 60 s of it (the tests of what
/// happens once the verification window has passed move `clock` past it).
func unlockBriefly(_ directory: VaultDirectory, clock: any KeychainClock) throws {
    _ = try Keychain.unlock(
        directory, passphrase: passphrase, idle: 900, verifyWindow: 60, policy: fastPolicy, clock: clock)
}

func readBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

func writeBytes(_ bytes: [UInt8], _ path: String) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}

let suffixes: PublicSuffixList = {
    // Debian's list when installed; the tests that need real rules say so.
    (try? PublicSuffixList.load())
        ?? (try! PublicSuffixList(bytes: Array("com\nco.uk\ngithub.io\n*.ck\n!www.ck\n".utf8)))
}()

let systemListPresent = FileManager.default.fileExists(atPath: PublicSuffixList.defaultPath)

func samplePassword(_ site: String = "example.com", user: String = "alice", password: String = "hunter2-hunter2")
    -> ItemContent
{
    .password(Password(sites: [site], username: user, password: password))
}

func sampleCode(_ uri: String = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example")
    throws(KeychainError) -> ItemContent
{
    .codeGenerator(try CodeGenerator(parsing: uri))
}

// MARK: WebAuthn options and verification with Sesame's relying-party library

func relyingParty(id: String = "example.com", origin: String = "https://login.example.com") throws -> RelyingParty {
    RelyingParty(configuration: try RelyingPartyConfiguration(id: id, name: "Example", origins: [origin]))
}

func creationOptions(
    _ rp: RelyingParty, userHandle: [UInt8] = Array(repeating: 7, count: 16), name: String = "alice",
    algorithms: [COSEAlgorithm]? = nil, exclude: [[UInt8]] = [], userVerification: UserVerificationRequirement? = nil
) -> PublicKeyCredentialCreationOptionsJSON {
    var options = rp.makeCreationOptions(
        user: PublicKeyCredentialUserEntityJSON(id: userHandle, name: name, displayName: name.capitalized),
        excludeCredentials: exclude.map { PublicKeyCredentialDescriptorJSON(id: $0) })
    if let algorithms { options.pubKeyCredParams = algorithms.map(PublicKeyCredentialParameters.init(alg:)) }
    if let userVerification { options.authenticatorSelection?.userVerification = userVerification }
    return options
}

func json(_ value: some Encodable) -> [UInt8] { Array(try! JSONEncoder().encode(value)) }

/// Runs `body` and returns the KeychainError code it threw; records an issue when it threw nothing or threw
/// another type.
func errorCode(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> KeychainError.Code? {
    do {
        try body()
        Issue.record("expected a KeychainError", sourceLocation: sourceLocation)
        return nil
    } catch let error as KeychainError {
        return error.code
    } catch {
        Issue.record("expected a KeychainError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

func errorCode(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async
    -> KeychainError.Code?
{
    do {
        try await body()
        Issue.record("expected a KeychainError", sourceLocation: sourceLocation)
        return nil
    } catch let error as KeychainError {
        return error.code
    } catch {
        Issue.record("expected a KeychainError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

// MARK: Devices and sync

/// Opens the vault, runs `body`, saves, and lets go of the directory lock before returning.
@discardableResult
func using<T>(
    _ directory: VaultDirectory, clock: any KeychainClock = ManualClock(), _ body: (Keychain) async throws -> T
)
    async throws -> T
{
    let keychain = try open(directory, clock: clock)
    let result = try await body(keychain)
    try keychain.save()
    return result
}

/// Two devices of one vault, synced through `transport`: A made the vault, B joined by approval.
func enrolledPair(_ dir: TemporaryDirectory, transport: any SyncTransport, clock: any KeychainClock = ManualClock())
    async throws -> (a: VaultDirectory, b: VaultDirectory, recovery: RecoveryKey)
{
    let a = dir.sub("a")
    let b = dir.sub("b")
    let recovery: RecoveryKey
    do {
        let (keychain, key) = try makeVault(a, name: "device A", clock: clock)
        recovery = key
        _ = try await keychain.sync(with: transport)
        try keychain.save()
    }
    let code: PairingCode
    do {
        let (joining, c) = try await Keychain.beginJoin(
            in: b, passphrase: passphrase, deviceName: "device B", transport: transport, parameters: fastKDF,
            policy: fastPolicy,
            clock: clock)
        code = c
        withExtendedLifetime(joining) {}
    }
    try await using(a, clock: clock) { keychain in
        try await keychain.approveJoin(code: code, name: "device B", transport: transport)
        _ = try await keychain.sync(with: transport)
    }
    try await using(b, clock: clock) { keychain in _ = try await keychain.completeJoin(transport: transport) }
    return (a, b, recovery)
}

@discardableResult
func sync(_ directory: VaultDirectory, _ transport: any SyncTransport, clock: any KeychainClock = ManualClock())
    async throws -> SyncReport
{
    try await using(directory, clock: clock) { try await $0.sync(with: transport) }
}

func itemTitles(_ directory: VaultDirectory) throws -> [String] {
    try open(directory).items.map(\.title).sorted()
}
