import Foundation
import HTTPTypes
import Hummingbird
import SesameBytes
import WebAuthn

/// The browsers an account has signed in from, remembered by the browser itself: the device cookie
/// (`sesame_device`, `Cookies.Kind.device`) holds one tag per account, each the first 16 bytes of an HMAC-SHA-256 of
/// the account's ID under the server secret, base64url, joined by `.`; newest first, at most `limit`, so one browser
/// remembers several accounts and the cookie stays small. Nothing is stored on the server.
///
/// A sign-in checks the tag of its account with one MAC and a constant-time compare against each tag the cookie
/// holds, and no query: a browser that holds it is known. A browser without it (a new device, cleared cookies, a
/// private window), or with a tag that does not match (tampered, another server's secret), is not: the sign-in
/// gives the `AccountNotice` `sign_in.new_device` ("New sign-in to your account", with the device and the client
/// address) and then sets the cookie. A tag tells nobody which account it is without the server secret, and a tag
/// copied from another browser only spares that browser the mail.
package struct KnownDevices: Sendable {
    package let serverSecret: [UInt8]
    package let cookies: Cookies

    /// How many accounts one browser remembers; the oldest is dropped past it.
    package static let limit = 8

    package init(serverSecret: [UInt8], cookies: Cookies) {
        self.serverSecret = serverSecret
        self.cookies = cookies
    }

    /// The account's tag: 22 base64url characters.
    package func tag(userID: String) -> String {
        Base64URL.encode(Array(Secrets.hmac(key: serverSecret, Array("device:\(userID)".utf8)).prefix(16)))
    }

    /// The tags a cookie value holds (anything not shaped like one is dropped; at most `limit` are read).
    package static func tags(_ value: String?) -> [Substring] {
        guard let value, value.utf8.count <= 24 * limit else { return [] }
        return value.split(separator: ".", omittingEmptySubsequences: true).prefix(limit).filter { $0.utf8.count == 22 }
    }

    /// Whether the request's device cookie holds the account's tag.
    package func knows(userID: String, request: Request) -> Bool {
        let tags = Self.tags(request.cookies[cookies.name(.device)]?.value)
        guard !tags.isEmpty else { return false }
        let expected = Array(tag(userID: userID).utf8)
        var found = false
        for tag in tags where ConstantTime.equal(Array(tag.utf8), expected) { found = true }
        return found
    }

    /// `Set-Cookie` remembering the account in this browser: its tag first, then the others the cookie held.
    package func remember(userID: String, request: Request) -> String {
        let mine = tag(userID: userID)
        let others = Self.tags(request.cookies[cookies.name(.device)]?.value).filter { $0 != mine }
        let value = ([Substring(mine)] + others).prefix(Self.limit).joined(separator: ".")
        return cookies.set(.device, value)
    }

    /// The device a `User-Agent` names, in the account page's words ("Chrome on Linux"): a fixed phrase, never the
    /// header itself, so a mail shows nothing the client chose.
    package static func describe(userAgent: String?) -> String {
        guard let agent = userAgent, !agent.isEmpty else { return "Unknown device" }
        func named(_ table: [(marks: [String], name: String)]) -> String? {
            table.first { $0.marks.contains { agent.contains($0) } }?.name
        }
        // In order: Edge's agent also names Chrome and Safari, Chrome's names Safari, Android's names Linux.
        let browser = named([
            (["Edg/"], "Edge"), (["Firefox/"], "Firefox"), (["Chrome/", "Chromium/"], "Chrome"),
            (["Safari/"], "Safari"),
        ])
        let system = named([
            (["Android"], "Android"), (["iPhone", "iPad"], "iOS"), (["Mac OS X"], "macOS"), (["Windows"], "Windows"),
            (["Linux"], "Linux"),
        ])
        if let browser, let system { return "\(browser) on \(system)" }
        return browser ?? system ?? "App or other device"
    }
}
