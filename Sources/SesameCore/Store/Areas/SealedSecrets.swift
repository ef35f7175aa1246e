import Foundation
import SQLKit
import SesameBytes

/// One line of `sesame seal-keys status`: how many values of a purpose are sealed under a key.
public struct SealedSecretCount: Sendable, Equatable {
    public enum KeyState: String, Sendable, Equatable {
        /// New values are sealed under it.
        case sealing
        /// In the key file (or the database key) but not first: opens values, seals none.
        case openOnly = "open only"
        /// A file key id that is not in the key file: these values cannot be opened.
        case missing = "missing"
        /// Not a sealed value this version knows.
        case unrecognised
    }

    public let purpose: String
    /// `database` or a file key id.
    public let key: String
    public let state: KeyState
    public let count: Int
}

/// What `sesame seal-keys rotate` did.
public struct ResealReport: Sendable, Equatable {
    /// Values sealed again under the sealing key.
    public var resealed = 0
    /// Values already under the sealing key.
    public var current = 0
    /// Rows written by someone else between the read and the update (left as they were).
    public var changedMeanwhile = 0
    /// Rows that could not be opened: purpose, user id and the reason (no secret material).
    public var failures: [String] = []
}

/// TOTP secrets and phone numbers sealed at rest: how many are under each key, and sealing them again under the
/// sealing key (`sesame seal-keys`).
public protocol SealedSecretStore {
    /// How many stored TOTP secrets and phone numbers are sealed under each key.
    func sealedSecretCounts() async throws -> [SealedSecretCount]
    /// Seals every stored TOTP secret and phone number that is not under the sealing key again under it; each
    /// row is replaced only if it still holds the value that was read (a concurrent write wins).
    func resealSecrets() async throws -> ResealReport
}

extension SQLStore: SealedSecretStore {
    /// One page of a column's sealed values: (row id, sealed bytes), ordered by row id, after `after`. A text
    /// column's value is its base64url text as UTF-8.
    private func sealedPage(_ column: SealedColumn, after: String, limit: Int) async throws -> [(String, [UInt8])] {
        try await db.raw(
            """
            SELECT \(ident: column.rowID) AS row_id, \(ident: column.column) AS sealed FROM \(ident: column.table)
            WHERE \(ident: column.rowID) > \(bind: after) AND \(ident: column.column) IS NOT NULL
            ORDER BY \(ident: column.rowID) LIMIT \(bind: limit)
            """
        ).all().map {
            (
                try $0.decode(column: "row_id", as: String.self),
                column.text
                    ? Array(try $0.decode(column: "sealed", as: String.self).utf8)
                    : [UInt8](try $0.decode(column: "sealed", as: Data.self))
            )
        }
    }

    /// Calls `body` with every sealed value of a column (bytes as stored), reading a page at a time.
    private func forEachSealed(_ column: SealedColumn, _ body: (String, [UInt8]) async throws -> Void) async throws {
        var after = ""
        while true {
            let page = try await sealedPage(column, after: after, limit: 500)
            for (rowID, stored) in page { try await body(rowID, stored) }
            guard let last = page.last, page.count == 500 else { return }
            after = last.0
        }
    }

    private func sealedUnder(_ column: SealedColumn, _ stored: [UInt8]) -> FieldCipher.SealedUnder {
        let cipher = ciphers.cipher(column.purpose)
        return column.text
            ? cipher.sealedUnder(text: String(decoding: stored, as: UTF8.self)) : cipher.sealedUnder(stored)
    }

    public func sealedSecretCounts() async throws -> [SealedSecretCount] {
        var counts: [SealedSecretCount] = []
        for column in schema.sealedColumns {
            var byKey: [FieldCipher.SealedUnder: Int] = [:]
            try await forEachSealed(column) { _, stored in byKey[sealedUnder(column, stored), default: 0] += 1 }
            for (key, count) in byKey {
                let name: String
                switch key {
                case .database: name = "database"
                case .file(let id): name = Hex.encode(id)
                case .unrecognised: name = "unrecognised"
                }
                counts.append(
                    SealedSecretCount(
                        purpose: column.purpose.rawValue, key: name,
                        state: ciphers.cipher(column.purpose).state(of: key), count: count))
            }
        }
        return counts.sorted { ($0.purpose, $0.key) < ($1.purpose, $1.key) }
    }

    public func resealSecrets() async throws -> ResealReport {
        var report = ResealReport()
        for column in schema.sealedColumns {
            let cipher = ciphers.cipher(column.purpose)
            try await forEachSealed(column) { rowID, stored in
                do {
                    let new: SQLBind
                    let old: SQLBind
                    if column.text {
                        let text = String(decoding: stored, as: UTF8.self)
                        guard let resealed = try cipher.resealedText(text, userID: rowID) else {
                            report.current += 1; return
                        }
                        (new, old) = (SQLBind(resealed), SQLBind(text))
                    } else {
                        guard let resealed = try cipher.resealed(stored, userID: rowID) else {
                            report.current += 1; return
                        }
                        (new, old) = (SQLBind(Data(resealed)), SQLBind(Data(stored)))
                    }
                    let updated =
                        !(try await db.raw(
                            """
                            UPDATE \(ident: column.table) SET \(ident: column.column) = \(new)
                            WHERE \(ident: column.rowID) = \(bind: rowID) AND \(ident: column.column) = \(old)
                            RETURNING \(ident: column.rowID)
                            """
                        ).all()).isEmpty
                    if updated { report.resealed += 1 } else { report.changedMeanwhile += 1 }
                } catch let error as StoreError where error.code == .unknownSealingKey {
                    report.failures.append(
                        "\(column.purpose.rawValue) of user \(rowID): sealed under file key \(error.keyID ?? "?"), which is not in the key file"
                    )
                } catch let error as StoreError where error.code == .undecryptable {
                    report.failures.append(
                        "\(column.purpose.rawValue) of user \(rowID): fails authentication (damaged or moved)")
                }
            }
        }
        return report
    }
}
