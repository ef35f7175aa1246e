import SesameCore
import SesameIdentityProvider
/// The parts of a SQLite database file's 100-byte header that `sesame restore` checks before it copies anything
/// (https://www.sqlite.org/fileformat2.html §1.3). Offsets and sizes, big-endian:
///
/// ```
///  0  16  "SQLite format 3\0"
/// 16   2  page size in bytes, a power of two 512…32768, or 1 meaning 65536
/// 24   4  file change counter
/// 28   4  database size in pages ("in-header database size")
/// 92   4  the change counter value for which the size at 28 is valid
/// ```
///
/// The size at 28 is trusted only when the counters at 24 and 92 agree (SQLite ≥ 3.7.0 keeps them so); a file
/// shorter than that many pages was cut off.
package struct SQLiteFileHeader: Equatable {
    package static let length = 100
    package static let magic: [UInt8] = Array("SQLite format 3".utf8) + [0]

    package let pageSize: Int
    package let pageCount: Int

    /// The number of bytes the whole file must have.
    package var expectedFileSize: Int { pageSize * pageCount }

    package enum Problem: Error, Equatable {
        /// Fewer than 100 bytes, but what is there starts like a SQLite file.
        case tooShort
        /// Not a SQLite file at all.
        case notSQLite
        /// A SQLite header with an impossible page size or a size field that is not valid.
        case malformed
    }

    /// Reads the header from the first bytes of a file (more than 100 may be given).
    package static func parse(_ bytes: [UInt8]) -> Result<SQLiteFileHeader, Problem> {
        guard bytes.count >= length else {
            let prefix = min(bytes.count, magic.count)
            return !bytes.isEmpty && Array(bytes[0..<prefix]) == Array(magic[0..<prefix])
                ? .failure(.tooShort)
                : .failure(.notSQLite)
        }
        guard Array(bytes[0..<magic.count]) == magic else { return .failure(.notSQLite) }
        let rawPageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return .failure(.malformed) }
        let changeCounter = uint32(bytes, at: 24)
        let validFor = uint32(bytes, at: 92)
        let pageCount = uint32(bytes, at: 28)
        guard changeCounter == validFor, pageCount > 0 else { return .failure(.malformed) }
        return .success(SQLiteFileHeader(pageSize: pageSize, pageCount: pageCount))
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> Int {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }
}
