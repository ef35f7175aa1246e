import Foundation
import HTTPTypes
import Testing

@testable import SesameCore
@testable import SesameIdentityProvider
@testable import SesameOperations
@testable import SesameSecondFactors

/// The server's one error shape (`ServerError`): every domain compares by code, records where it was made, and
/// prints its fixed message; API and OAuth answers are two renderings of it.
@Suite struct ServerErrorTests {
    @Test func equalityLooksAtTheCodeOnly() {
        let one = APIError(.unauthorized, .invalidCode, "one message")
        let other = APIError(.badRequest, .invalidCode, "another message")
        #expect(one == other)
        #expect(one != APIError.factorNotEnabled)
        #expect(Set([one, other]).count == 1)
        #expect(BackupError(.corrupt, "a") == BackupError(.corrupt, "b"))
        #expect(BackupError(.corrupt, "a") != BackupError(.truncated, "a"))
    }

    @Test func recordsWhereItWasMade() {
        let line = #line + 1
        let error = OAuthError(.invalidRequest, "response_type is missing")
        #expect(error.file == #fileID)
        #expect(error.line == line)
    }

    @Test func describesByItsFixedMessage() {
        #expect(AdminError(description: "no account \"ada\"").description == "no account \"ada\"")
        #expect(
            DatabaseError("no PostgreSQL configuration", code: .unusable).description == "no PostgreSQL configuration")
        #expect(
            BackupError(.newerSchema, "written by a newer Sesame").description
                == "written by a newer Sesame [newerSchema]")
    }

    @Test func theTwoRenderingsOfOneShape() {
        var api = APIError(.unauthorized, .invalidCode, "The code is wrong or was already used.")
        api.extra = ["credentialId": "x", "error": "ignored"]
        #expect(
            APIErrorCode.body(of: api) == [
                "error": "invalid_code", "message": "The code is wrong or was already used.", "credentialId": "x",
            ])
        #expect(APIErrorCode.renderingHeaders.isEmpty)
        let oauth = OAuthError.invalidClient(basic: true)
        #expect(
            OAuthErrorCode.body(of: oauth) == [
                "error": "invalid_client", "error_description": "Client authentication failed.",
            ])
        #expect(OAuthErrorCode.renderingHeaders[HTTPField.Name("Pragma")!] == "no-cache")
        #expect(oauth.status == .unauthorized)
        #expect(oauth.wwwAuthenticate == #"Basic realm="sesame""#)
    }
}
