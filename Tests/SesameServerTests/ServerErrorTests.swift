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

    /// `catch StoreError.conflict` matches by code, as a `catch` of an enum case did; the details stay readable.
    @Test func aCatchMatchesByCode() {
        func code(of error: any Error) -> String {
            do { throw error } catch StoreError.conflict { return "conflict" } catch let error as StoreError
                where error.code == .undecryptable
            {
                return "undecryptable " + (error.purpose ?? "")
            } catch { return "other" }
        }
        #expect(code(of: StoreError.conflict) == "conflict")
        #expect(code(of: StoreError.undecryptable("totp")) == "undecryptable totp")
        #expect(code(of: StoreError.newerSchema(version: 30, knownThrough: 17)) == "other")
        #expect(code(of: AdminError(description: "conflict")) == "other")
        #expect(StoreError.unknownSealingKey("sms", keyID: "ab12").keyID == "ab12")
        #expect(!StoreError.unknownSealingKey("sms", keyID: "ab12").description.contains("secret"))
    }

    /// One error shape for the server: every error type its targets declare is a `ServerError` domain (a
    /// `typealias … = ServerError<…Code>`), but four that are no error a caller sees: `SQLiteCallError`, the SQLite
    /// C API's result code and message as the driver reports them (as postgres-nio's `PSQLError` is for
    /// PostgreSQL); the authorization endpoint's `RedirectError`, which carries an `OAuthError` to the client's
    /// redirect URI; the backup header parser's `Problem`, an outcome carried in a `Result` and never thrown; and
    /// keychain sync's private `PushRefused`, which rolls a push's transaction back inside one function.
    @Test func everyServerErrorTypeIsAServerErrorDomain() throws {
        let sources = VocabularyTests.root.appendingPathComponent("Sources")
        let targets =
            try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter {
                // Libraries the server uses, each with its own error type: SesameLanguage (`LanguageError`).
                $0.hasPrefix("Sesame") && !["SesameBytes", "SesameBuildInfo", "SesameLanguage"].contains($0)
            } + ["sesame"]
        #expect(targets.count >= 15)
        let declaration = try Regex(
            #"(?m)^\s*(?:public |package |private |fileprivate |internal )?(?:final )?(?:struct|enum|class|actor) (\w+)[^{\n]*:[^{\n]*\bError\b"#
        )
        var found: [String] = []
        for target in targets {
            let directory = sources.appendingPathComponent(target)
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for match in text.matches(of: declaration) {
                    if let name = match.output[1].substring, name != "ServerError" { found.append(String(name)) }
                }
            }
        }
        #expect(found.sorted() == ["Problem", "PushRefused", "RedirectError", "SQLiteCallError"])
    }
}
