import SesameCore
/// Why `sesame backup` or `sesame restore` refused or failed. Nothing was written under the name the operator gave
/// when one of these is thrown (a partial file is removed first).
///
/// `code` is opaque and extensible (compare with `==`, which looks at the code only); the description names the
/// file and what to do, never a key, a hash or a row's contents.
public struct BackupError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable machine-readable name, e.g. `newerSchema`.
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The database is PostgreSQL: its own tools (`pg_dump`, `pg_restore`) make and restore backups.
        public static let postgres = Code("postgres")
        /// The SQLite database to back up does not exist, or has no Sesame schema.
        public static let noDatabase = Code("noDatabase")
        /// The backup file already exists (a backup never overwrites).
        public static let outputExists = Code("outputExists")
        /// The file given to restore cannot be read.
        public static let unreadable = Code("unreadable")
        /// Not a SQLite file, or a SQLite file that is not a Sesame backup.
        public static let notABackup = Code("notABackup")
        /// Shorter than its own header says: the copy was cut off.
        public static let truncated = Code("truncated")
        /// A SQLite file whose pages or recorded schema do not check out.
        public static let corrupt = Code("corrupt")
        /// Written by a newer Sesame than this one (a schema this version does not know).
        public static let newerSchema = Code("newerSchema")
        /// The live database is at an older schema than this binary's (back it up with the version that serves it).
        public static let olderSchema = Code("olderSchema")
        /// The database to restore into already holds tables.
        public static let targetNotEmpty = Code("targetNotEmpty")
        /// Sealed values in the backup need a sealing key the configured key file does not hold.
        public static let sealingKeyMissing = Code("sealingKeyMissing")
        /// Creating, writing or renaming a file failed.
        public static let io = Code("io")
    }

    public let code: Code
    /// What happened and what to do; safe to print (paths, counts, key ids, schema versions).
    public let detail: String
    public let file: String
    public let line: Int

    package init(_ code: Code, _ detail: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.detail = detail
        self.file = file
        self.line = line
    }

    public static func == (lhs: BackupError, rhs: BackupError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "\(detail) [\(code)]" }
}
