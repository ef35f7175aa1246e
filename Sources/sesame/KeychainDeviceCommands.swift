import ArgumentParser
import Foundation
import Keychain
import OneTimeCode
import WebAuthn

// `sesame keychain enroll | devices | approve | join | recover`: the devices of a vault, and getting a new one in.

struct KeychainEnrollCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enroll",
        abstract: "Enroll this device with your account on a Sesame server, so it can sync there.",
        discussion: """
            Needs a session of the account, signed in recently (a native sign-in's sessionToken), from \
            --session-token-file (- for standard input) or $SESAME_SESSION_TOKEN; it is sent once and not kept. \
            The server answers with a token for this device alone, kept in the vault directory (sync-server, mode \
            0600). Revoking the device on the account page, or removing it from the vault on another device, \
            ends that token. Enroll before `init`, `join` or `recover`.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "A file holding the session token (- for standard input).")
    var sessionTokenFile: String?

    @Option(help: "This device's name on the account's device list.")
    var deviceName: String = ProcessInfo.processInfo.hostName

    @Flag(help: "Replace an existing enrollment.")
    var force = false

    func run() async throws {
        guard let server = options.serverAddress else { throw keychainUsage("give --server URL") }
        guard options.syncFolder == nil else { throw keychainUsage("give a server, not a sync folder") }
        let directory = try options.directory()
        if !force, try keychainCall({ try SyncEnrollment.load(from: directory) }) != nil {
            throw keychainUsage("this directory is already enrolled (use --force to enroll again)")
        }
        let token: String
        if let sessionTokenFile {
            token =
                sessionTokenFile == "-"
                ? try readFirstLine(fd: 0, what: "standard input")
                : try readFirstLine(path: sessionTokenFile, what: "--session-token-file")
        } else if let env = options.environment["SESAME_SESSION_TOKEN"], !env.isEmpty {
            token = env
        } else {
            throw keychainUsage("give the session token with --session-token-file or SESAME_SESSION_TOKEN")
        }
        let enrollment = try await keychainCall {
            try await HTTPSyncTransport.enroll(
                server: server, sessionToken: token.trimmingCharacters(in: .whitespaces),
                name: String(deviceName.prefix(64)))
        }
        try keychainCall { try enrollment.save(to: directory) }
        print("Enrolled with \(enrollment.server) as \(String(deviceName.prefix(64))).")
    }
}

struct KeychainDevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the vault's devices, or remove one (--remove), which rotates the vault key.",
        discussion: """
            The list is the vault's own, sealed device list, not the server's. Removing a device makes a new vault \
            key at the next sync, re-seals every item under it and wraps it only for the remaining devices and the \
            recovery key, so the removed device can read nothing written afterwards.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "Remove the device whose ID starts with this (see the list).")
    var remove: String?

    func run() async throws {
        let keychain = try options.open()
        if let remove {
            let matches = keychain.devices.filter { Base64URL.encode($0.id).hasPrefix(remove) }
            guard matches.count == 1 else {
                throw keychainUsage(
                    matches.isEmpty ? "no device ID starts with \(remove)" : "several devices match \(remove)")
            }
            try keychainCall { try keychain.removeDevice(matches[0].id) }
            if options.hasTransport {
                let report = try await keychainCall { try await keychain.sync(with: try options.transport()) }
                print("Removed \(matches[0].name); the vault key rotated (vault version \(report.version)).")
            } else {
                print("Removed \(matches[0].name); the key rotates at the next sync.")
            }
            try keychainCall { try keychain.save() }
            return
        }
        for device in keychain.devices {
            let mine = device.id == keychain.deviceId ? "  (this device)" : ""
            print("\(Base64URL.encode(device.id))  \(device.fingerprint)  \(device.name)\(mine)")
        }
    }
}

struct KeychainApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Let a new device join: type the code it shows.",
        discussion: """
            The code names the new device's key and carries a secret only it and this device know: the vault key is \
            sealed with both, so neither a swapped key nor an approval the server made itself can get a device in.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The 20-character code the joining device shows (or the text of its QR code).")
    var code: String

    @Option(help: "A name for the new device.")
    var name: String = "new device"

    func run() async throws {
        let pairing = try keychainCall { try PairingCode(text: code) }
        let keychain = try options.open()
        let transport = try options.transport()
        let entry = try await keychainCall {
            try await keychain.approveJoin(code: pairing, name: name, transport: transport)
        }
        let report = try await keychainCall { try await keychain.sync(with: transport) }
        try keychainCall { try keychain.save() }
        print("Approved \(entry.name) (key fingerprint \(entry.fingerprint)); vault version \(report.version).")
    }
}

struct KeychainRefuseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refuse",
        abstract: "Refuse a device asking to join: its join ends. Without a code, list the devices waiting.",
        discussion: """
            Each waiting device is listed by the first 12 characters of the code it shows (its key's part; the rest             is a secret only that device knows). Refusing drops its request on the server; the device's next             `join` ends with joinRefused. The vault itself does not change.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The code the device shows, or its first 12 characters (as listed).")
    var code: String?

    func run() async throws {
        let keychain = try options.open()
        let transport = try options.transport()
        let waiting = try await keychainCall { try await keychain.waitingJoins(transport: transport) }
        guard let code else {
            if waiting.isEmpty { print("No device is waiting to join.") }
            for device in waiting { print("\(device.codeStart)  key fingerprint \(device.fingerprint)") }
            return
        }
        let typed = String(code.uppercased().filter { $0.isLetter || $0.isNumber }.prefix(12))
        let matches = waiting.filter { $0.codeStart.filter { $0 != "-" } == typed }
        guard typed.count == 12, let device = matches.first, matches.count == 1 else {
            throw keychainFailure(
                KeychainError(.pairingCodeMismatch, reason: "no device waiting to join shows a code starting so"))
        }
        try await keychainCall { try await keychain.refuseJoin(request: device.request, transport: transport) }
        print("Refused the device showing \(device.codeStart)…; its join has ended.")
    }
}

struct KeychainJoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join an existing vault from this device: shows a code to approve on an enrolled device.",
        discussion: """
            The first run makes this device's key pair and a local vault file (asking for its passphrase), posts \
            the join request and prints the code (and writes it as a QR image with --qr). Run `sesame keychain \
            approve CODE` on an enrolled device, then run `join` here again to finish.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "This device's name.")
    var deviceName: String = ProcessInfo.processInfo.hostName

    @Option(help: "Also write the code as a QR image to this .png file (an existing file only with --force).")
    var qr: String?

    @Flag(help: "Replace an existing --qr file.")
    var force = false

    func run() async throws {
        // Refused before anything is made or posted, so a refusal changes nothing.
        if let qr, !force, FileManager.default.fileExists(atPath: qr) {
            throw keychainUsage("\(qr) exists (use --force to replace it)")
        }
        let directory = try options.directory()
        let transport = try options.transport()
        let exists = FileManager.default.fileExists(atPath: directory.path + "/vault")
        if !exists {
            let passphrase = try options.passphrase(prompt: "New passphrase for this device's vault: ", confirm: true)
            let (keychain, code) = try await keychainCall {
                try await Keychain.beginJoin(
                    in: directory, passphrase: passphrase, deviceName: String(deviceName.prefix(64)),
                    transport: transport)
            }
            withExtendedLifetime(keychain) {}
            try show(code)
            return
        }
        let keychain = try options.open()
        do {
            let report = try await keychain.completeJoin(transport: transport)
            try keychainCall { try keychain.save() }
            print("Joined: \(keychain.items.count) items, vault version \(report.version).")
        } catch let error as KeychainError where error.code == .joinPending {
            if let code = keychain.pendingPairingCode { try show(code) }
            throw keychainFailure(error)
        } catch let error as KeychainError {
            throw keychainFailure(error)
        }
    }

    private func show(_ code: PairingCode) throws {
        print("Pairing code: \(code.text)")
        print("On an enrolled device run: sesame keychain approve \(code.text)")
        if let qr {
            let image = try keychainQR(code.qrPayload)
            try writePrivateFile(image, to: qr, force: force)
            print("QR code: \(qr)")
        }
    }
}

/// A QR image (PNG) of `text`, with Sesame's own encoder.
func keychainQR(_ text: String) throws -> [UInt8] {
    do {
        return try QRCode(encoding: text, errorCorrection: .medium).png(scale: 8)
    } catch {
        throw keychainUsage("cannot make a QR code: \(error.code)")
    }
}

struct KeychainRecoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Restore the vault on this device with the recovery key.",
        discussion: """
            Reads the recovery key from --recovery-key-file (- for standard input) or asks for it, and a new \
            passphrase for this device's vault. A wrong recovery key changes nothing, here or on the server.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "A file holding the recovery key (- for standard input).")
    var recoveryKeyFile: String?

    @Option(help: "This device's name.")
    var deviceName: String = ProcessInfo.processInfo.hostName

    func run() async throws {
        let directory = try options.directory()
        let transport = try options.transport()
        let text: String
        if let recoveryKeyFile {
            text =
                recoveryKeyFile == "-"
                ? try readFirstLine(fd: 0, what: "standard input")
                : try readFirstLine(path: recoveryKeyFile, what: "--recovery-key-file")
        } else {
            text = try Terminal.readSecret("Recovery key: ")
        }
        let key = try keychainCall { try RecoveryKey(text: text.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let passphrase = try options.passphrase(prompt: "New passphrase for this device's vault: ", confirm: true)
        let (keychain, report) = try await keychainCall {
            try await Keychain.recover(
                in: directory, recoveryKey: key, passphrase: passphrase, deviceName: String(deviceName.prefix(64)),
                transport: transport)
        }
        print("Recovered: \(keychain.items.count) items, vault version \(report.version).")
        print("Devices still listed: \(keychain.devices.map(\.name).joined(separator: ", ")).")
        print("Remove lost ones with `sesame keychain devices --remove ID` so the vault key rotates.")
    }
}
