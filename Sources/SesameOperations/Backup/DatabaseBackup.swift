import Foundation
import Logging
import SQLKit
import SQLiteKit
import SesameCore
import SesameIdentityProvider

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sesame backup` and `sesame restore` (docs/backup.md).
///
/// A backup is a SQLite file made with `VACUUM INTO` from a read transaction on the live database, so it is one
/// consistent snapshot even while the server writes (WAL lets the reader and the writer run together). It carries
/// one table of its own beside Sesame's, the only place this format adds anything:
///
/// ```
/// sesame_backup (one row)
///   format           TEXT    "sesame-backup-1"
///   schema_version   BIGINT  the highest migration applied (sesame_migrations agrees, or the file is refused)
///   created_at       BIGINT  Unix milliseconds
///   producer         TEXT    `sesame --version` of the binary that made it
///   sealing_key_ids  TEXT    comma-separated ids of sealing-file keys the sealed values need ("" when none);
///                            the keys themselves are not in the backup
/// ```
///
/// Files are written under a temporary name beside the destination (mode 0600, created exclusively), synced, then
/// given their final name in one step; whatever fails before that removes the temporary file, so nothing appears
/// half-written under the name the operator gave, and the source is never modified.
public enum DatabaseBackup {
    package static let markerTable = "sesame_backup"
    package static let format = "sesame-backup-1"

    public struct BackupSummary: Sendable {
        public let path: String
        public let schemaVersion: Int
        public let bytes: Int
        /// Sealing-file key ids the backup's sealed values need; keep the key file apart from the backup.
        public let sealingKeyIDs: [String]
        /// Some values are sealed under the key derived from the server secret, which the backup holds.
        public let usesDatabaseKey: Bool
    }

    public struct RestoreSummary: Sendable {
        public let path: String
        public let schemaVersion: Int
        /// The schema after restoring (higher when an older backup was migrated).
        public let migratedTo: Int
        public let accounts: Int
        public let createdAt: Date
        public let producer: String
    }

    // MARK: - Backup

    /// Copies the configured SQLite database to `output` while servers may be using it.
    package static func backup(
        _ configuration: ServerConfiguration, to output: String, producer: String, now: Date, logger: Logger,
        schema known: DatabaseSchema
    ) async throws -> BackupSummary {
        let source = try sqlitePath(configuration, postgresAdvice: pgDumpAdvice)
        let keys = try configuration.sealingKeyFile.map { path throws(SealingKeyError) in
            try SealingKeyFile.load(path: path)
        }
        guard FileManager.default.fileExists(atPath: source) else {
            throw BackupError(.noDatabase, "no database at \(source): nothing to back up (check --database)")
        }
        guard !exists(output) else {
            throw BackupError(.outputExists, "\(output) exists: a backup never overwrites; choose a new name")
        }

        let live = try await PlainSQLite.open(source, logger: logger)
        let schema: Int
        do {
            schema = try await live.schemaVersion() ?? 0
            guard schema > 0 else {
                throw BackupError(
                    .noDatabase, "\(source) holds no Sesame schema: nothing to back up (check --database)")
            }
            guard schema <= known.current else {
                throw BackupError(
                    .newerSchema,
                    "\(source) is at schema \(schema), newer than this sesame knows (\(known.current)): back it up with the version that serves it"
                )
            }
            guard schema == known.current else {
                throw BackupError(
                    .olderSchema,
                    "\(source) is at schema \(schema), older than this sesame's (\(known.current)): back it up with the version that serves it, before upgrading"
                )
            }
        } catch {
            try? await live.close()
            throw error
        }

        let partial = try TemporaryFile(beside: output)
        do {
            // VACUUM INTO needs an absent or empty file: the exclusive, mode-0600 one just created is empty.
            do {
                try await retryingWhileBusy { try await live.sql.raw("VACUUM INTO \(bind: partial.path)").run() }
                try await live.close()
            } catch {
                try? await live.close()
                throw error
            }

            let engine = try await SQLEngine.open(.sqlite(path: partial.path), logger: logger)
            let counts: [SealedSecretCount]
            do {
                let store = try await SQLStore.open(engine: engine, schema: known, now: now, sealingKeys: keys)
                counts = try await store.sealedSecretCounts()
                let ids = fileKeyIDs(counts)
                try await engine.sql.raw(
                    """
                    CREATE TABLE sesame_backup (format TEXT NOT NULL, schema_version BIGINT NOT NULL,
                        created_at BIGINT NOT NULL, producer TEXT NOT NULL, sealing_key_ids TEXT NOT NULL)
                    """
                ).run()
                try await engine.sql.raw(
                    "INSERT INTO sesame_backup VALUES (\(bind: format), \(bind: schema), \(bind: now.milliseconds), \(bind: producer), \(bind: ids.joined(separator: ",")))"
                ).run()
                // One self-contained file: no WAL beside it.
                try await engine.sql.raw("PRAGMA journal_mode = DELETE").run()
                try await engine.shutdown()
            } catch {
                try? await engine.shutdown()
                throw error
            }
            let bytes = try partial.commit(as: output, replacing: false)
            return BackupSummary(
                path: output, schemaVersion: schema, bytes: bytes, sealingKeyIDs: fileKeyIDs(counts),
                usesDatabaseKey: counts.contains { $0.key == "database" })
        } catch {
            partial.remove()
            if let error = error as? BackupError { throw error }
            throw BackupError(.io, "backup to \(output) failed, nothing written: \(describe(error))")
        }
    }

    // MARK: - Restore

    /// Restores a backup into the configured SQLite database, which must be absent or empty.
    package static func restore(
        _ configuration: ServerConfiguration, from input: String, now: Date, logger: Logger,
        schema known: DatabaseSchema
    ) async throws -> RestoreSummary {
        let target = try sqlitePath(configuration, postgresAdvice: pgRestoreAdvice)
        let keys = try configuration.sealingKeyFile.map { path throws(SealingKeyError) in
            try SealingKeyFile.load(path: path)
        }
        try await checkEmpty(target, logger: logger)
        let size = try checkHeader(input)

        let partial = try TemporaryFile(beside: target)
        do {
            try partial.copy(from: input, expectedBytes: size)
            let marker = try await readMarker(partial.path, input: input, logger: logger, schema: known)

            let engine = try await SQLEngine.open(.sqlite(path: partial.path), logger: logger)
            let migratedTo: Int
            let accounts: Int
            do {
                try await engine.sql.raw("DROP TABLE sesame_backup").run()
                if marker.schemaVersion < known.current { try await Migrations.run(known, on: engine, now: now) }
                migratedTo = try await engine.appliedMigrations().max() ?? 0
                let store = try await SQLStore.open(engine: engine, schema: known, now: now, sealingKeys: keys)
                let unopenable = try await store.sealedSecretCounts().filter {
                    $0.state == .missing || $0.state == .unrecognised
                }
                if !unopenable.isEmpty {
                    let ids = Set(unopenable.map(\.key)).sorted().joined(separator: ", ")
                    let configured =
                        keys.map {
                            "the key file \(configuration.sealingKeyFile ?? "") holds \($0.descriptions.joined(separator: ", "))"
                        }
                        ?? "no sealing key file is configured"
                    throw BackupError(
                        .sealingKeyMissing,
                        "\(input): \(unopenable.map(\.count).reduce(0, +)) sealed value(s) need sealing key(s) \(ids), but \(configured); give the key file kept with this backup (--sealing-key-file). Nothing was restored"
                    )
                }
                accounts =
                    try await engine.sql.raw("SELECT count(*) AS n FROM users").first()?.decode(
                        column: "n", as: Int.self)
                    ?? 0
                try await engine.sql.raw("PRAGMA journal_mode = DELETE").run()
                try await engine.shutdown()
            } catch {
                try? await engine.shutdown()
                throw error
            }
            // The target was absent or an empty database; its leftover side files would belong to that one.
            for suffix in ["-wal", "-shm", "-journal"] { unlink(target + suffix) }
            _ = try partial.commit(as: target, replacing: true)
            return RestoreSummary(
                path: target, schemaVersion: marker.schemaVersion, migratedTo: migratedTo, accounts: accounts,
                createdAt: Date(timeIntervalSince1970: Double(marker.createdAt) / 1000), producer: marker.producer)
        } catch {
            partial.remove()
            if let error = error as? BackupError { throw error }
            throw BackupError(.io, "restore from \(input) failed, nothing restored: \(describe(error))")
        }
    }

    package struct Marker {
        package let schemaVersion: Int
        package let createdAt: Int64
        package let producer: String
    }

    /// Checks the copy's pages and its `sesame_backup` row against its migrations table.
    package static func readMarker(_ path: String, input: String, logger: Logger, schema known: DatabaseSchema)
        async throws -> Marker
    {
        let copy = try await PlainSQLite.open(path, logger: logger)
        do {
            let check = try await copy.sql.raw("PRAGMA integrity_check").all()
            let verdict = try check.first?.decode(column: "integrity_check", as: String.self)
            guard check.count == 1, verdict == "ok" else {
                throw BackupError(.corrupt, "\(input) is damaged (SQLite integrity check failed): use another backup")
            }
            let tables = try await copy.sql.raw(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('sesame_backup', 'sesame_migrations')"
            ).all().map { try $0.decode(column: "name", as: String.self) }
            guard tables.contains(markerTable) else {
                throw BackupError(
                    .notABackup,
                    "\(input) is a SQLite file but not a Sesame backup (no sesame_backup table); make one with `sesame backup --to FILE`"
                )
            }
            let rows = try await copy.sql.raw(
                "SELECT format, schema_version, created_at, producer FROM sesame_backup"
            ).all()
            guard rows.count == 1, let row = rows.first,
                let format = try? row.decode(column: "format", as: String.self),
                let schema = try? row.decode(column: "schema_version", as: Int.self),
                let created = try? row.decode(column: "created_at", as: Int64.self),
                let producer = try? row.decode(column: "producer", as: String.self)
            else {
                throw BackupError(.corrupt, "\(input): its sesame_backup record is not one well-formed row")
            }
            guard format == Self.format else {
                throw BackupError(
                    .newerSchema, "\(input) is a backup in format \(format.prefix(40)), which this sesame does not read"
                )
            }
            guard schema <= known.current else {
                throw BackupError(
                    .newerSchema,
                    "\(input) was made by a newer Sesame (schema \(schema); this one knows up to \(known.current)): restore it with that version or newer"
                )
            }
            let applied =
                tables.contains("sesame_migrations")
                ? try await copy.sql.raw("SELECT max(version) AS v FROM sesame_migrations").first()?.decode(
                    column: "v", as: Int?.self) : nil
            guard applied == schema else {
                throw BackupError(
                    .corrupt, "\(input) says schema \(schema) but holds migrations up to \(applied ?? 0)")
            }
            try await copy.close()
            return Marker(schemaVersion: schema, createdAt: created, producer: producer)
        } catch {
            try? await copy.close()
            throw error
        }
    }

    /// The restore target must not hold anything: absent, empty, or a SQLite file without tables.
    package static func checkEmpty(_ target: String, logger: Logger) async throws {
        let wal = (try? FileManager.default.attributesOfItem(atPath: target + "-wal"))?[.size] as? Int ?? 0
        guard exists(target) else {
            guard wal == 0 else { throw notEmpty(target) }
            return
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: target))?[.size] as? Int ?? 0
        guard size > 0 || wal > 0 else { return }
        let header = (try? readPrefix(target, count: SQLiteFileHeader.length)) ?? []
        guard case .success = SQLiteFileHeader.parse(header) else { throw notEmpty(target) }
        let connection = try await PlainSQLite.open(target, logger: logger)
        let count: Int
        do {
            count =
                try await connection.sql.raw("SELECT count(*) AS n FROM sqlite_master").first()?.decode(
                    column: "n", as: Int.self) ?? 0
            try await connection.close()
        } catch {
            try? await connection.close()
            throw notEmpty(target)
        }
        guard count == 0 else { throw notEmpty(target) }
    }

    package static func notEmpty(_ target: String) -> BackupError {
        BackupError(
            .targetNotEmpty,
            "\(target) already holds data: restore only into an empty database (point --database at a new file, or move this one away first)"
        )
    }

    /// Checks the file is a whole SQLite file before anything is copied; returns its size.
    package static func checkHeader(_ input: String) throws -> Int {
        let attributes: [FileAttributeKey: Any]
        let prefix: [UInt8]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: input)
            prefix = try readPrefix(input, count: SQLiteFileHeader.length)
        } catch {
            throw BackupError(.unreadable, "\(input) cannot be read")
        }
        let size = attributes[.size] as? Int ?? 0
        switch SQLiteFileHeader.parse(prefix) {
        case .failure(.tooShort):
            throw BackupError(
                .truncated, "\(input) is cut off (\(size) bytes, shorter than a SQLite header): use another copy")
        case .failure(.notSQLite):
            throw BackupError(.notABackup, "\(input) is not a SQLite file, so not a Sesame backup")
        case .failure(.malformed):
            throw BackupError(.corrupt, "\(input) has a damaged SQLite header")
        case .success(let header):
            if size < header.expectedFileSize {
                throw BackupError(
                    .truncated,
                    "\(input) is cut off: \(size) bytes where its header says \(header.expectedFileSize); use another copy"
                )
            }
            if size > header.expectedFileSize {
                throw BackupError(
                    .corrupt, "\(input) is longer (\(size) bytes) than its header says (\(header.expectedFileSize))")
            }
            return size
        }
    }

    package static func sqlitePath(_ configuration: ServerConfiguration, postgresAdvice: String) throws -> String {
        switch try DatabaseLocation(parsing: configuration.database) {
        case .sqlite(let path): return path
        case .postgres: throw BackupError(.postgres, postgresAdvice)
        }
    }

    package static let pgDumpAdvice = """
        the database is PostgreSQL: back it up with PostgreSQL's own tool while servers run, e.g. \
        `pg_dump --format=custom --file=sesame.dump "$SESAME_DATABASE"` (a consistent snapshot), and keep the \
        sealing key file apart from the dump (docs/backup.md)
        """
    package static let pgRestoreAdvice = """
        the database is PostgreSQL: restore a pg_dump into an empty database with \
        `pg_restore --no-owner --dbname="$SESAME_DATABASE" sesame.dump`, then start sesame (docs/backup.md)
        """

    package static func fileKeyIDs(_ counts: [SealedSecretCount]) -> [String] {
        Set(counts.map(\.key)).subtracting(["database", "unrecognised"]).sorted()
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    package static func readPrefix(_ path: String, count: Int) throws -> [UInt8] {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        return [UInt8](try handle.read(upToCount: count) ?? Data())
    }

    /// An error's text without SQL binds (SQLite's messages name no bound value).
    package static func describe(_ error: any Error) -> String {
        String(String(describing: error).prefix(300))
    }
}

/// One SQLite connection without Sesame's settings (no switch to WAL): for reading a file as it is. Opened through
/// `SQLiteHandle`, the one SQLite library the process opens database files with (`SQLiteHandle.configure`).
package struct PlainSQLite {
    package let handle: SQLiteHandle
    package let sql: any SQLDatabase

    package static func open(_ path: String, logger: Logger) async throws -> PlainSQLite {
        let handle = try SQLiteHandle.open(path: path)
        let plain = PlainSQLite(
            handle: handle,
            sql: SQLiteHandleDatabase(
                handle: handle, logger: logger, eventLoop: MultiThreadedEventLoopGroup.singleton.any()))
        do {
            try await plain.sql.raw("PRAGMA busy_timeout = 5000").run()
        } catch {
            try? await plain.close()
            throw error
        }
        return plain
    }

    /// The highest migration applied, nil when the file has no migrations table.
    package func schemaVersion() async throws -> Int? {
        let table = try await sql.raw(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'sesame_migrations'"
        ).all()
        guard !table.isEmpty else { return nil }
        return try await sql.raw("SELECT max(version) AS v FROM sesame_migrations").first()?.decode(
            column: "v", as: Int?.self)
    }

    package func close() async throws {
        handle.close()
    }
}

/// A file created exclusively with mode 0600 beside its destination, renamed there once complete.
package struct TemporaryFile {
    package let path: String

    package init(beside destination: String) throws {
        let url = URL(fileURLWithPath: destination)
        let directory = url.deletingLastPathComponent().path
        let name = ".\(url.lastPathComponent).partial-\(Secrets.random(6).map { String($0, radix: 16) }.joined())"
        path = (directory as NSString).appendingPathComponent(name)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw BackupError(.io, "cannot create a file in \(directory) (\(String(cString: strerror(errno))))")
        }
        // The umask can only have removed bits; say exactly 0600.
        fchmod(fd, 0o600)
        close(fd)
    }

    /// Streams `source` into this (empty) file; the size must stay what was checked.
    package func copy(from source: String, expectedBytes: Int) throws {
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: source))
        defer { try? input.close() }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? output.close() }
        var copied = 0
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
            copied += chunk.count
        }
        guard copied == expectedBytes else {
            throw BackupError(
                .truncated, "\(source) changed size while it was read (\(copied) of \(expectedBytes) bytes)")
        }
    }

    /// Syncs the file and gives it its final name; `replacing: false` fails when that name exists.
    /// Returns the file's size.
    package func commit(as destination: String, replacing: Bool) throws -> Int {
        // Written in rollback-journal mode and closed: everything is in the one file.
        for suffix in ["-wal", "-journal"] where DatabaseBackup.exists(path + suffix) {
            throw BackupError(.io, "\(path)\(suffix) is left over: the copy was not closed cleanly")
        }
        unlink(path + "-shm")
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BackupError(.io, "cannot reopen \(path)") }
        var info = stat()
        let synced = fsync(fd) == 0 && fstat(fd, &info) == 0
        close(fd)
        guard synced else { throw BackupError(.io, "cannot sync \(path) to disk") }
        if replacing {
            guard rename(path, destination) == 0 else {
                throw BackupError(.io, "cannot rename to \(destination) (\(String(cString: strerror(errno))))")
            }
        } else {
            // link fails if the name exists, so a backup made meanwhile under the same name is never replaced.
            guard link(path, destination) == 0 else {
                if errno == EEXIST {
                    throw BackupError(
                        .outputExists, "\(destination) exists: a backup never overwrites; choose a new name")
                }
                throw BackupError(.io, "cannot create \(destination) (\(String(cString: strerror(errno))))")
            }
            unlink(path)
        }
        let directory = open(URL(fileURLWithPath: destination).deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return Int(info.st_size)
    }

    package func remove() {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }
}
