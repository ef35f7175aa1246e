import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO

/// The outermost middleware: turns every error into the JSON error shape, adds the headers every answer carries,
/// counts the request in the metrics and logs one line for it.
///
/// Unexpected errors are logged by type only (their descriptions can contain SQL binds) and answered with 500;
/// a database that cannot be reached answers 503 `unavailable`, and one whose disk is full 503 `storage_full`.
package struct ErrorMiddleware: RouterMiddleware {
    package typealias Context = SesameRequestContext
    package let metrics: ServerMetrics
    /// Known paths and their methods: a known path with another method answers 405, not 404.
    package var methods: MethodIndex?
    /// The server's vocabulary (`Vocabulary.server`, given by the composition root): in debug builds an answer with a
    /// code that no part lists stops the process, so a code declared and thrown but left out of its feature's list
    /// (and so out of the OpenAPI and page checks) fails the tests.
    package var vocabulary: Vocabulary?

    package init(metrics: ServerMetrics, methods: MethodIndex? = nil) {
        self.metrics = metrics
        self.methods = methods
    }

    package static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    package static let frameOptions = HTTPField.Name("X-Frame-Options")!

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            #if DEBUG
                Self.checkListed(error, in: vocabulary)
            #endif
            response = try await Self.answer(error, request: request, context: context, methods: methods)
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        // A route may ask for less (forward auth's redirects that carry a one-time code say `no-referrer`).
        if response.headers[Self.referrerPolicy] == nil { response.headers[Self.referrerPolicy] = "same-origin" }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        response.headers[Self.frameOptions] = "DENY"
        // A HEAD answer never has a body; errors (404, 405) built here keep their headers and Content-Length.
        if request.method == .head { response = response.createHeadResponse() }
        let route = context.endpointPath ?? "unmatched"
        let duration = ContinuousClock.now - start
        metrics.request(method: request.method.rawValue, route: route, status: response.status.code, duration: duration)
        // The route pattern, never the raw path or query (paths carry session and credential IDs); no headers.
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue), "route": .string(route),
                "status": .stringConvertible(response.status.code),
                "ms": .stringConvertible(
                    duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000),
                "client": .string(context.clientAddress),
            ]
        )
        return response
    }

    private static func checkListed(_ error: any Error, in vocabulary: Vocabulary?) {
        guard let vocabulary else { return }
        if let error = error as? APIError {
            assert(vocabulary.errorCodes.contains(error.code), "\(error.code) is in no part's Vocabulary.errorCodes")
        } else if let error = error as? OAuthError {
            assert(
                vocabulary.oauthErrorCodes.contains(error.code),
                "\(error.code) is in no part's Vocabulary.oauthErrorCodes")
        }
    }

    /// The answer to an error a route or middleware threw.
    package static func answer(_ error: any Error, request: Request, context: Context, methods: MethodIndex?)
        async throws
        -> Response
    {
        switch error {
        case let error as APIError:
            return try error.response(from: request, context: context)
        case let error as OAuthError:
            // The identity provider's endpoints answer in OAuth's own error shape (RFC 6749 §5.2).
            return try error.response(from: request, context: context)
        case let error as HTTPError:
            let mapped: APIError
            switch error.status {
            case .notFound:
                if let allow = await methods?.allowedMethods(for: request, context: context) {
                    mapped = .methodNotAllowed(allow: allow)
                } else {
                    mapped = .notFound
                }
            case .methodNotAllowed: mapped = .methodNotAllowed(allow: nil)
            case .contentTooLarge: mapped = .bodyTooLarge
            case let status where status.code < 500: mapped = .badRequest
            default: mapped = .internalError
            }
            return try mapped.response(from: request, context: context)
        case let error as StoreError where error.code == .undecryptable:
            // A stored secret failed authentication (damaged, moved between rows, or another server secret).
            // Logged by purpose only; the answer says no more than any server error.
            context.logger.error(
                "stored secret failed authentication", metadata: ["purpose": .string(error.purpose ?? "")])
        case let error as StoreError where error.code == .unknownSealingKey:
            // The value was sealed under a file key this node does not have (key file missing a line).
            context.logger.error(
                "stored secret names a sealing key that is not in the key file",
                metadata: ["purpose": .string(error.purpose ?? ""), "key_id": .string(error.keyID ?? "")]
            )
        case _ where isStorageFull(error):
            // Nothing can be written; reads go on. Logged once per request by type, like the other database errors.
            context.logger.warning(
                "database storage full", metadata: ["error_type": .string(String(describing: type(of: error)))])
            return try APIError.storageFull.response(from: request, context: context)
        case _ where isUnreachableDatabase(error):
            context.logger.warning(
                "database unreachable", metadata: ["error_type": .string(String(describing: type(of: error)))])
            return try APIError.unavailable.response(from: request, context: context)
        default:
            context.logger.error(
                "request failed", metadata: ["error_type": .string(String(describing: type(of: error)))])
        }
        return try APIError.internalError.response(from: request, context: context)
    }

    /// The database's disk is full: SQLite's `SQLITE_FULL`, PostgreSQL's `disk_full` (SQLSTATE 53100).
    package static func isStorageFull(_ error: any Error) -> Bool {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "53100" }
        if let error = error as? SQLiteCallError { return error.isStorageFull }
        return false
    }

    /// PostgreSQL down, unreachable (no connection) or silent past its deadline (`DatabaseDeadline`), or SQLite
    /// locked for longer than its busy timeout.
    package static func isUnreachableDatabase(_ error: any Error) -> Bool {
        if (error as? DatabaseError)?.code == .timeout { return true }
        if let error = error as? PSQLError {
            return [
                .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
                .failedToAddSSLHandler,
            ]
            .contains(error.code)
        }
        if let error = error as? SQLiteCallError { return error.isBusy }
        return false
    }
}
