import ArgumentParser
import Foundation
import Logging
import SesameServer
import SesameCore
import SesameWeb
import SesameMetadata
import SesameSecondFactors
import SesameIdentityProvider
import SesamePasswords
import SesamePasskeys
import SesameAccount
import SesameReauthentication
import SesameKeychainSync
import SesameForwardAuth
import SesameOperations

/// `sesame backup --to FILE` and `sesame restore --from FILE` (docs/backup.md): thin wrappers over
/// `DatabaseBackup`, which owns the checks. A refusal exits with status 1 and a `BackupError` message that says what
/// to do; nothing is written under the given name unless the command succeeded.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database to a new file while servers run (consistent, mode 0600).",
        discussion: """
            The file records the schema version and the ids of the sealing keys its sealed values need; the keys \
            themselves stay in the sealing key file, which you back up separately. On PostgreSQL this prints how \
            to use pg_dump instead. Restore with `sesame restore --from FILE` into an empty database.
            """
    )

    @Option(name: .customLong("to"), help: "The backup file to create (must not exist).") var output: String
    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        do {
            let summary = try await DatabaseBackup.backup(
                configuration, to: output, producer: SesameVersion.description, now: Date(), logger: quietLogger(),
                schema: ServerSchema.full)
            print("backup written to \(summary.path) (\(summary.bytes) bytes, schema version \(summary.schemaVersion))")
            if summary.sealingKeyIDs.isEmpty {
                print(
                    summary.usesDatabaseKey
                        ? "sealed values are under the database key, which the backup holds: keep the file as secret as the database"
                        : "no sealed values")
            } else {
                print(
                    "sealed values need the sealing key file with key(s) \(summary.sealingKeyIDs.joined(separator: ", ")): it is not in the backup; keep a copy of it apart from the backup"
                )
            }
        } catch {
            throw StartupErrors.explained(error)
        }
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a `sesame backup` file into an empty SQLite database (then start the server).",
        discussion: """
            Refuses, changing nothing, when the database already holds data, the file is not a Sesame backup, is \
            cut off or damaged, was made by a newer Sesame, or has sealed values whose keys the configured sealing \
            key file lacks. An older backup is migrated to this version's schema. Stop the servers first.
            """
    )

    @Option(name: .customLong("from"), help: "The backup file to read (it is not modified).") var input: String
    @OptionGroup var options: ServerOptions

    func run() async throws {
        let configuration = try options.resolve()
        do {
            let summary = try await DatabaseBackup.restore(
                configuration, from: input, now: Date(), logger: quietLogger(), schema: ServerSchema.full)
            let created = summary.createdAt.formatted(.iso8601)
            print(
                "restored \(summary.accounts) account(s) into \(summary.path) from a backup of \(created) by \(summary.producer)"
            )
            if summary.migratedTo != summary.schemaVersion {
                print("schema migrated from version \(summary.schemaVersion) to \(summary.migratedTo)")
            } else {
                print("schema version \(summary.schemaVersion)")
            }
        } catch {
            throw StartupErrors.explained(error)
        }
    }
}

private func quietLogger() -> Logger {
    var logger = Logger(label: "sesame.backup")
    logger.logLevel = .warning
    return logger
}
