import Foundation

/// KeePassXC's CSV export (Database → Export → CSV File), read into the same candidates as a CXF import and added
/// the same way (``Keychain/importKeePassXC(_:)``).
///
/// RFC 4180 CSV in UTF-8 (an optional byte-order mark; CRLF or LF line ends; fields in double quotes, `""` for a
/// quote inside), whose first row names the columns; KeePassXC writes
/// `"Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"`. The columns are
/// found by name (Title, Username, Password and URL are required; Notes, TOTP, Created and Last Modified are
/// read when present). Each row with a password becomes a password for its URL's host name (its title's, when
/// that is one and the URL is empty), with its notes; its TOTP (an `otpauth://` link, or a bare Base32 secret) a
/// code generator for the same site. The whole file is parsed before anything is added: a row with another number
/// of fields than the header, an unterminated quote, a stray quote, or a missing column is `invalidExport` and adds
/// nothing; a row that breaks the item rules is reported and skipped.
enum KeePassXCImport {
    static let maximumSize = 256 * 1024 * 1024
    static let maximumRows = 1_000_000

    /// The records of an RFC 4180 document: every byte belongs to a field, a separator, a quote or a line end.
    static func records(_ bytes: [UInt8]) throws(KeychainError) -> [[String]] {
        var input = bytes[...]
        if input.starts(with: [0xEF, 0xBB, 0xBF]) { input = input.dropFirst(3) }
        var records: [[String]] = []
        var record: [String] = []
        var field: [UInt8] = []
        var i = input.startIndex
        var quoted = false
        var afterQuote = false  // a quoted field ended; only a comma or a line end may follow
        func endField() throws(KeychainError) {
            guard let text = String(validating: field, as: UTF8.self) else {
                throw invalid("a field that is not UTF-8 (row \(records.count + 1))")
            }
            record.append(text)
            field = []
            afterQuote = false
        }
        while i < input.endIndex {
            let byte = input[i]
            if quoted {
                if byte == 0x22 {
                    if i + 1 < input.endIndex && input[i + 1] == 0x22 {
                        field.append(0x22)
                        i += 1
                    } else {
                        quoted = false
                        afterQuote = true
                    }
                } else {
                    field.append(byte)
                }
            } else if byte == 0x2C {
                try endField()
            } else if byte == 0x0A || (byte == 0x0D && i + 1 < input.endIndex && input[i + 1] == 0x0A) {
                if byte == 0x0D { i += 1 }
                try endField()
                records.append(record)
                record = []
                guard records.count <= maximumRows else { throw invalid("more than \(maximumRows) rows") }
            } else if afterQuote {
                throw invalid("text after a closing quote (row \(records.count + 1))")
            } else if byte == 0x22 {
                guard field.isEmpty else {
                    throw invalid("a quote inside an unquoted field (row \(records.count + 1))")
                }
                quoted = true
            } else {
                field.append(byte)
            }
            i += 1
        }
        guard !quoted else { throw invalid("a quoted field that does not end") }
        if !field.isEmpty || !record.isEmpty || afterQuote {
            try endField()
            records.append(record)
        }
        return records
    }

    static func parse(_ bytes: [UInt8], report: inout CXFImportReport) throws(KeychainError) -> [CXFImport.Candidate] {
        guard bytes.count <= maximumSize else { throw invalid("larger than \(maximumSize) bytes") }
        let rows = try records(bytes)
        guard let header = rows.first else { throw invalid("no header row") }
        func column(_ name: String) -> Int? { header.firstIndex { $0.lowercased() == name.lowercased() } }
        guard let title = column("Title"), let username = column("Username"), let password = column("Password"),
            let url = column("URL")
        else { throw invalid("the header lacks Title, Username, Password or URL") }
        let notes = column("Notes")
        let totp = column("TOTP")
        let created = column("Created")
        let modified = column("Last Modified")
        for (n, row) in rows.enumerated() where row.count != header.count {
            throw invalid("row \(n + 1) has \(row.count) fields, the header \(header.count)")
        }
        var out: [CXFImport.Candidate] = []
        for (n, row) in rows.enumerated().dropFirst() {
            let value = { (index: Int?) -> String? in index.flatMap { row[$0].isEmpty ? nil : row[$0] } }
            var sites: [String] = []
            if let address = value(url), BitwardenImport.isWeb(address), let site = SiteName.normalise(address) {
                sites = [site]
            } else if value(url) == nil, let name = value(title), let site = SiteName.normalise(name) {
                sites = [site]
            }
            let createdAt = value(created).flatMap(BitwardenImport.date)
            let modifiedAt = value(modified).flatMap(BitwardenImport.date)
            let user = value(username) ?? ""
            if let secret = value(password) {
                if sites.isEmpty {
                    report.failures.append("row \(n + 1): a password without a site or URL")
                } else {
                    out.append(
                        CXFImport.Candidate(
                            content: .password(Password(sites: sites, username: user, password: secret)),
                            notes: value(notes), created: createdAt, modified: modifiedAt))
                }
            }
            if let code = value(totp) {
                do throws(KeychainError) {
                    let generator = try BitwardenImport.codeGenerator(
                        code, account: user, issuer: value(title), sites: sites)
                    out.append(
                        CXFImport.Candidate(
                            content: .codeGenerator(generator), notes: nil, created: createdAt, modified: modifiedAt))
                } catch {
                    report.failures.append("row \(n + 1) (TOTP): \(error.reason)")
                }
            }
        }
        return out
    }

    static func invalid(_ what: String) -> KeychainError {
        KeychainError(.invalidExport, reason: "not a KeePassXC CSV export this keychain reads: \(what)")
    }
}

extension Keychain {
    /// Imports a KeePassXC CSV export (``KeePassXCImport``) as new items, as ``importCXF(_:)`` does: credentials
    /// already here are counted, not added twice; a malformed file adds nothing. Call ``save()``.
    public func importKeePassXC(_ csv: [UInt8]) throws(KeychainError) -> CXFImportReport {
        var report = CXFImportReport()
        let candidates = try KeePassXCImport.parse(csv, report: &report)
        return try add(candidates, report: report)
    }
}
