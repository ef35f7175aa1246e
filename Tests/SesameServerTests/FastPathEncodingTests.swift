import Foundation
import Testing

@testable import SesameCore

/// The sign-in answer written without `JSONEncoder` is the bytes the response encoder writes, or nil (and the
/// encoder writes it).
@Suite struct FastPathEncodingTests {
    static let names = [
        "alice", "Zoë Ünicode", "名前", "emoji 😀 name", "with/slash", "a b", "x", String(repeating: "long", count: 16),
    ]

    static func body(username: String, displayName: String, expires: Date, token: String?) -> SessionIssuedBody {
        let user = User(
            id: UUID().uuidString.lowercased(), username: username, displayName: displayName,
            userHandle: (0..<64).map { _ in UInt8.random(in: 0...255) }, disabled: false, createdAt: Date())
        return SessionIssuedBody(
            status: "signed_in", sessionToken: token, csrfToken: Secrets.token().token, expiresAt: expires,
            user: AccountUser(user))
    }

    @Test func signInAnswerIsTheBytesTheEncoderWrites() throws {
        for round in 0..<400 {
            // Years 2000 to 9999, at any fraction of a second.
            let expires = Date(timeIntervalSince1970: Double.random(in: 946_684_800..<253_402_300_799.999))
            let body = Self.body(
                username: Self.names[round % Self.names.count],
                displayName: Self.names[(round / 3) % Self.names.count], expires: expires,
                token: round % 2 == 0 ? nil : Secrets.token().token)
            let expected = Array(try SesameResponseEncoder.encoder.encode(body))
            let fast = try #require(body.fastPathJSON())
            #expect(
                fast == expected,
                "\(String(decoding: fast, as: UTF8.self)) != \(String(decoding: expected, as: UTF8.self))")
        }
    }

    @Test(arguments: ["quo\"te", "back\\slash", "tab\there", "nul\u{0}", "bell\u{7}"])
    func namesThatNeedEscapesGoToTheEncoder(_ name: String) {
        let soon = Date().addingTimeInterval(3600)
        #expect(Self.body(username: name, displayName: "ok", expires: soon, token: nil).fastPathJSON() == nil)
        #expect(Self.body(username: "ok", displayName: name, expires: soon, token: nil).fastPathJSON() == nil)
    }

    @Test func datesOutsideTheFastRangeGoToTheEncoder() {
        for date in [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 946_684_799.5),
            Date(timeIntervalSince1970: 253_402_300_800),
        ] {
            #expect(Self.body(username: "a", displayName: "b", expires: date, token: nil).fastPathJSON() == nil)
        }
    }
}
