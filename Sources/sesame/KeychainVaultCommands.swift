import ArgumentParser
import Foundation
import Keychain
import WebAuthn

// `sesame keychain init | unlock | lock | status | sync`: the vault itself.

struct KeychainInitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Make a new vault and show its recovery key once.",
        discussion: """
            Asks for a new passphrase twice (or reads it from --passphrase-file or $SESAME_KEYCHAIN_PASSPHRASE). \
            The recovery key is printed once and never stored: write it down. With it and the sync server, \
            everything comes back after every device is lost.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "This device's name in the vault's device list.")
    var deviceName: String = ProcessInfo.processInfo.hostName

    func run() async throws {
        let directory = try options.directory()
        // The transport first: a server without an enrollment stops here, before a vault is made.
        let transport = options.hasTransport ? try options.transport() : nil
        let passphrase = try options.passphrase(prompt: "New passphrase: ", confirm: true)
        let (keychain, recovery) = try keychainCall {
            try Keychain.create(in: directory, passphrase: passphrase, deviceName: String(deviceName.prefix(64)))
        }
        print("Made a new vault in \(directory.path).")
        print("")
        print("Recovery key (write it down now; it is shown only this once):")
        print("")
        print("    \(recovery.text)")
        print("")
        if let sharing = keychain.sharingKey {
            print("Sharing key: \(sharing.text)")
            print("Fingerprint: \(sharing.fingerprint)")
        }
        if let transport {
            let report = try await keychainCall { try await keychain.sync(with: transport) }
            try keychainCall { try keychain.save() }
            print("Synced: vault version \(report.version).")
        }
    }
}

struct KeychainUnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Check the passphrase and keep the vault unlocked until it has been idle for a while.",
        discussion: """
            The session is a file in the vault directory (mode 0600) holding the vault's file key; it ends after \
            --idle seconds without use, or at `lock`. Passkeys report user verification (UV) only within \
            --verify-window seconds of this unlock; after that, relying parties that require it are refused \
            until the next unlock.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Option(help: "Seconds without use after which the vault locks itself.")
    var idle: UInt32 = 600

    @Option(help: "Seconds after this unlock during which passkeys report user verification.")
    var verifyWindow: UInt32 = 300

    func run() async throws {
        let directory = try options.directory()
        let passphrase = try options.passphrase()
        let status = try keychainCall {
            try Keychain.unlock(directory, passphrase: passphrase, idle: idle, verifyWindow: verifyWindow)
        }
        print("Unlocked; locks after \(idle) seconds idle (now until \(isoDate(status.expires))).")
    }
}

struct KeychainLockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "End the unlocked session now.")

    @OptionGroup var options: KeychainOptions

    func run() async throws {
        let directory = try options.directory()
        try keychainCall { try Keychain.lock(directory) }
        print("Locked.")
    }
}

struct KeychainStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the vault is unlocked and, when it is, what it holds and where it stands."
    )

    @OptionGroup var options: KeychainOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let directory = try options.directory()
        let session = try keychainCall { try Keychain.sessionStatus(directory) }
        var members: [(String, JSONValue)] = [
            ("directory", .string(directory.path)), ("unlocked", .bool(session != nil)),
        ]
        if let session {
            members.append(("locksAt", .string(isoDate(session.expires))))
            members.append(("userVerifiedUntil", .string(isoDate(session.verifiesUserUntil))))
        }
        // Without a session, the contents need the passphrase; only ask when one was given.
        var keychain: Keychain?
        if session != nil {
            keychain = try options.open()
        } else if try options.givenPassphrase() != nil {
            keychain = try options.open()
        }
        if let keychain {
            if let pending = keychain.pendingPairingCode {
                members.append(("joining", .bool(true)))
                members.append(("pairingCode", .string(pending.text)))
            }
            if let status = keychain.vaultStatus {
                members += [
                    ("vault", .string(Base64URL.encode(status.vaultId))),
                    ("device", .string(keychain.deviceName)),
                    ("deviceFingerprint", .string(keychain.deviceFingerprint.description)),
                    ("keyEpoch", .int(Int64(status.epoch))),
                    ("passkeys", .int(Int64(status.itemCounts[.passkey] ?? 0))),
                    ("passwords", .int(Int64(status.itemCounts[.password] ?? 0))),
                    ("codes", .int(Int64(status.itemCounts[.code] ?? 0))),
                    ("devices", .int(Int64(status.devices.count))),
                    ("syncedVersion", .int(Int64(clamping: status.syncedVersion))),
                    // When this device last synced successfully (`sync`, the window's Sync now, a join).
                    ("lastSynced", status.lastSynced.map { .string(isoDate($0)) } ?? (json ? .null : .string("never"))),
                    ("pendingChanges", .int(Int64(status.pendingChanges))),
                    ("sharingKey", .string(keychain.sharingKey?.text ?? "")),
                    ("sharingFingerprint", .string(status.sharingFingerprint.description)),
                    ("kdf", .string(keychain.kdfParameters.description)),
                ]
            }
        }
        if json {
            print(JSONValue.object(members).rendered())
        } else {
            for (name, value) in members {
                let text: String
                switch value {
                case .string(let s): text = s
                case .number(let n): text = n
                case .bool(let b): text = b ? "yes" : "no"
                default: text = value.rendered()
                }
                print("\(name): \(text)")
            }
        }
    }
}

struct KeychainSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Pull, check, merge and push through the sync folder.",
        discussion: """
            Everything the server sends is checked against the vault's sealed manifest: a record missing, \
            planted, replayed, swapped or rolled back, or a device key the vault does not hold, stops the sync \
            with an error and changes nothing here.
            """
    )

    @OptionGroup var options: KeychainOptions

    func run() async throws {
        let keychain = try options.open()
        let transport = try options.transport()
        let report = try await keychainCall { try await keychain.sync(with: transport) }
        try keychainCall { try keychain.save() }
        print("Synced: vault version \(report.version), \(report.received) received, \(report.sent) sent.")
        if report.conflictCopies > 0 {
            print("\(report.conflictCopies) conflict cop\(report.conflictCopies == 1 ? "y" : "ies") kept (see `list`).")
        }
        for device in report.unknownServerDevices {
            note(
                "warning: the server lists a device this vault does not hold (key fingerprint \(KeyFingerprint(publicKey: device.publicKey))); it is given nothing"
            )
        }
    }
}
