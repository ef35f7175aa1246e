import SesameCore
/// Why `sesame backup` or `sesame restore` refused or failed. Nothing was written under the name the operator gave
/// when one of these is thrown (a partial file is removed first).
///
/// `code` is opaque and extensible (compare with `==`, which looks at the code only); the description names the
/// file and what to do, never a key, a hash or a row's contents.
public typealias BackupError = ServerError<BackupErrorCode>

/// The codes of `BackupError`.
public struct BackupErrorCode: ServerErrorCode {
    /// A stable machine-readable name, e.g. `newerSchema`.
    public let name: String
    private init(_ name: String) { self.name = name }
    public var description: String { name }

    /// The database is PostgreSQL: its own tools (`pg_dump`, `pg_restore`) make and restore backups.
    public static let postgres = BackupErrorCode("postgres")
    /// The SQLite database to back up does not exist, or has no Sesame schema.
    public static let noDatabase = BackupErrorCode("noDatabase")
    /// The backup file already exists (a backup never overwrites).
    public static let outputExists = BackupErrorCode("outputExists")
    /// The file given to restore cannot be read.
    public static let unreadable = BackupErrorCode("unreadable")
    /// Not a SQLite file, or a SQLite file that is not a Sesame backup.
    public static let notABackup = BackupErrorCode("notABackup")
    /// Shorter than its own header says: the copy was cut off.
    public static let truncated = BackupErrorCode("truncated")
    /// A SQLite file whose pages or recorded schema do not check out.
    public static let corrupt = BackupErrorCode("corrupt")
    /// Written by a newer Sesame than this one (a schema this version does not know).
    public static let newerSchema = BackupErrorCode("newerSchema")
    /// The live database is at an older schema than this binary's (back it up with the version that serves it).
    public static let olderSchema = BackupErrorCode("olderSchema")
    /// The database to restore into already holds tables.
    public static let targetNotEmpty = BackupErrorCode("targetNotEmpty")
    /// Sealed values in the backup need a sealing key the configured key file does not hold.
    public static let sealingKeyMissing = BackupErrorCode("sealingKeyMissing")
    /// Creating, writing or renaming a file failed.
    public static let io = BackupErrorCode("io")

    /// The operator reads the code after the detail: `... [newerSchema]`.
    public static func describe(_ message: String, code: BackupErrorCode) -> String { "\(message) [\(code)]" }
}

extension ServerError where Code == BackupErrorCode {
    package init(_ code: BackupErrorCode, _ detail: String, file: String = #fileID, line: Int = #line) {
        self.init(code: code, message: detail, file: file, line: line)
    }

    /// What happened and what to do; safe to print (paths, counts, key ids, schema versions).
    public var detail: String { message }
}
