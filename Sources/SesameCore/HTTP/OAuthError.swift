import Foundation
import Hummingbird
import NIOCore

/// An error answer of the token, UserInfo, revocation and introspection endpoints: `{"error", "error_description"}`
/// (RFC 6749 §5.2) with `Cache-Control: no-store`; `invalid_client` is 401 with a `WWW-Authenticate` challenge when
/// the client tried HTTP Basic, `invalid_token` is 401 with a Bearer challenge (RFC 6750 §3).
package struct OAuthError: HTTPResponseError {
    package let code: OAuthErrorCode
    package let description: String
    package var status: HTTPResponse.Status
    package var challenge: String?

    package init(
        _ code: OAuthErrorCode, _ description: String, status: HTTPResponse.Status = .badRequest,
        challenge: String? = nil
    ) {
        self.code = code
        self.description = description
        self.status = status
        self.challenge = challenge
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [
            .contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .init("Pragma")!: "no-cache",
        ]
        if let challenge { headers[.wwwAuthenticate] = challenge }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = try encoder.encode(["error": code.rawValue, "error_description": description])
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
