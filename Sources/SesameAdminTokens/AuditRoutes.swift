import Foundation
import Hummingbird
import NIOCore
import SesameCore

/// The audit log as the admin API reads it (scope `audit`): `GET /api/admin/audit`, a page of events newest first
/// with the filters below and a cursor to the next page, and `GET /api/admin/audit.csv`, every event the same
/// filters pass, as CSV (streamed a page at a time; cells a spreadsheet would take for a formula are quoted with
/// a leading `'`).
///
/// Filters (query parameters, each optional): `person` (a username, in any case, or an account id), `kind` (an
/// audit kind), `outcome` (`success`, `failure`, `refused`, `pending_second_factor`), `from` and `to` (ISO 8601
/// instants, or milliseconds since 1970; `from` inclusive, `to` exclusive); `after` (the `next` of the page before)
/// and `limit` (1 to 200, 50 unless asked) for the JSON pages. Anything else unreadable is 400
/// `invalid_audit_filter`. The statement behind both is one keyset query on indexes migration 23 added.
package struct AuditRoutes: Sendable {
    package let store: any AdminTokenStore & AccountStore
    /// The audit kinds the server declares, offered to the console's kind filter.
    package let kinds: [String]

    package init(store: any AdminTokenStore & AccountStore, kinds: [String]) {
        self.store = store
        self.kinds = kinds
    }

    package struct EventBody: ResponseEncodable, Sendable {
        package let id: String
        package let at: Date
        package let kind: String
        package let outcome: String
        package let userId: String?
        package let username: String?
        package let clientAddress: String
        package let detail: String
        /// The app (OpenID Connect client id) the event concerns, if any: the console links the row to it.
        package let clientId: String?

        init(_ event: AuditEvent) {
            id = event.id
            at = event.at
            kind = event.kind
            outcome = event.outcome
            userId = event.userID
            username = event.username
            clientAddress = event.clientAddress
            detail = event.detail
            clientId = event.clientID
        }
    }

    package struct PageBody: ResponseEncodable, Sendable {
        package let events: [EventBody]
        /// The cursor of the next page (`after`), absent on the last.
        package let next: String?
        /// Every audit kind the server declares (for the console's kind filter).
        package let kinds: [String]
    }

    private static func invalid(_ message: String) -> APIError {
        APIError(.badRequest, .invalidAuditFilter, message)
    }

    /// An instant as ISO 8601 (with or without fractional seconds) or milliseconds since 1970.
    package static func instant(_ text: String, name: String) throws -> Date {
        if !text.isEmpty, text.count <= 15, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let ms = Int64(text) {
            return Date(milliseconds: ms)
        }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        throw invalid("\(name) is not an ISO 8601 time such as 2026-11-28T09:30:00Z.")
    }

    /// `<at>.<id>`: the last event of a page.
    package static func cursor(_ event: AuditEvent) -> String { "\(event.at.milliseconds).\(event.id)" }

    package static func parseCursor(_ text: String) throws -> (at: Int64, id: String) {
        let parts = text.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count <= 15, let at = Int64(parts[0]), parts[1].count <= 64 else {
            throw invalid("after is not a cursor this API gave.")
        }
        return (at, String(parts[1]))
    }

    /// The filter a request's query names.
    package func auditFilter(_ query: [String: String]) async throws -> AuditFilter {
        var filter = AuditFilter()
        func value(_ name: String) -> String? {
            guard let value = query[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        if let person = value("person") {
            guard person.count <= 128 else { throw Self.invalid("person is a username or an account id.") }
            // A username (any case) or an account's id; an id no account has any more still finds its events.
            if let user = try await store.user(usernameKey: Usernames.key(person)) {
                filter.userID = user.id
            } else {
                filter.userID = person
            }
        }
        if let kind = value("kind") {
            guard kind.count <= 64 else { throw Self.invalid("kind is an audit kind such as sign_in.passkey.") }
            filter.kind = kind
        }
        if let outcome = value("outcome") {
            guard AuditOutcome(rawValue: outcome) != nil else {
                throw Self.invalid(
                    "outcome is one of " + AuditOutcome.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            filter.outcome = outcome
        }
        if let from = value("from") { filter.from = try Self.instant(from, name: "from") }
        if let to = value("to") { filter.to = try Self.instant(to, name: "to") }
        if let after = value("after") { filter.after = try Self.parseCursor(after) }
        return filter
    }

    /// The query's parameters, each name once (a repeated one is refused rather than guessed at).
    private static func query(_ request: Request) throws -> [String: String] {
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters {
            guard query[String(name)] == nil else { throw invalid("\(name) is given twice.") }
            query[String(name)] = String(value)
        }
        return query
    }

    /// A CSV cell: a leading `=`, `+`, `-`, `@`, tab or carriage return gets a `'` (a spreadsheet would read a
    /// formula); a cell with a comma, quote or line break is quoted, its quotes doubled.
    package static func csvCell(_ text: String) -> String {
        var cell = text
        if let first = cell.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) { cell = "'" + cell }
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    package static let csvHeader = "at,kind,outcome,user_id,username,client_address,detail,id,client_id\r\n"

    package static func csvLine(_ event: AuditEvent) -> String {
        [
            event.at.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)), event.kind, event.outcome,
            event.userID ?? "", event.username ?? "", event.clientAddress, event.detail, event.id, event.clientID ?? "",
        ].map(csvCell).joined(separator: ",") + "\r\n"
    }

    package func register(admin: RouterGroup<AdminRequestContext>) {
        admin.get("audit") { request, context in
            try context.admin.require(.audit)
            let query = try Self.query(request)
            let filter = try await auditFilter(query)
            var limit = 50
            if let text = query["limit"] {
                guard let number = Int(text), (1...200).contains(number) else {
                    throw Self.invalid("limit is a number from 1 to 200.")
                }
                limit = number
            }
            // One more than asked says whether a next page exists.
            let events = try await store.auditPage(filter, limit: limit + 1)
            let page = events.prefix(limit)
            return PageBody(
                events: page.map(EventBody.init), next: events.count > limit ? page.last.map(Self.cursor) : nil,
                kinds: kinds)
        }
        admin.get("audit.csv") { request, context in
            try context.admin.require(.audit)
            var asked = try await auditFilter(try Self.query(request))
            asked.after = nil
            let base = asked
            let store = store
            let first = try await store.auditPage(base, limit: 1000)
            let headers: HTTPFields = [
                .contentType: "text/csv; charset=utf-8",
                .contentDisposition: "attachment; filename=\"audit.csv\"",
                .init("X-Content-Type-Options")!: "nosniff",
            ]
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: Self.csvHeader))
                    var page = first
                    var filter = base
                    while !page.isEmpty {
                        try await writer.write(ByteBuffer(string: page.map(Self.csvLine).joined()))
                        guard page.count == 1000, let last = page.last else { break }
                        filter.after = (last.at.milliseconds, last.id)
                        page = try await store.auditPage(filter, limit: 1000)
                    }
                    try await writer.finish(nil)
                })
        }
    }
}
