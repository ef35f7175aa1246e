import Foundation
import HTTPTypes
import Hummingbird

/// Which methods each known path answers, for 405 Method Not Allowed.
///
/// Built from the application router's own route list (`Router.routes`) into a second router that has one GET
/// endpoint per path, so a path is "known" by exactly the router's matching rules (literal segments and
/// `{captures}`); a path with GET also answers HEAD. When the application router finds no endpoint for a request, the error middleware asks this
/// index: a known path with another method gets 405 with an `Allow` header; anything else stays 404.
package struct MethodIndex: Sendable {
    private let responder: RouterResponder<SesameRequestContext>

    package init(routes: [Router<SesameRequestContext>.RouteDescription]) {
        var methods: [String: (path: RouterPath, methods: Set<String>)] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path, [])].methods.insert(route.method.rawValue)
            // The application router answers HEAD wherever it answers GET (`autoGenerateHeadEndpoints`).
            if route.method == .get {
                methods[route.path.description]?.methods.insert(HTTPRequest.Method.head.rawValue)
            }
        }
        let index = Router(context: SesameRequestContext.self)
        for (_, entry) in methods {
            let allow = entry.methods.sorted().joined(separator: ", ")
            index.get(entry.path) { _, _ in
                Response(status: .ok, headers: [.allow: allow])
            }
        }
        responder = index.buildResponder()
    }

    /// The `Allow` value for the request's path, or nil if no route has that path.
    package func allowedMethods(for request: Request, context: SesameRequestContext) async -> String? {
        let probe = Request(
            head: HTTPRequest(method: .get, scheme: nil, authority: nil, path: request.uri.path),
            body: .init(buffer: .init()))
        guard let response = try? await responder.respond(to: probe, context: context), response.status == .ok else {
            return nil
        }
        return response.headers[.allow]
    }
}
