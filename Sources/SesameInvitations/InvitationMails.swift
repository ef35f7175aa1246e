import Foundation
import SesameBytes
import SesameCore

/// The invitation's mail: a text part and an HTML part, the link on the configured origin.
package struct InvitationMails: Sendable {
    package let siteName: String
    package let origin: String

    package init(_ configuration: ServerConfiguration) {
        siteName = configuration.rpName
        origin = configuration.origin.hasSuffix("/") ? String(configuration.origin.dropLast()) : configuration.origin
    }

    /// The outbox kind (the `kind` column; the `mail.gave_up` audit detail).
    package static let kind = "invitation"

    /// Where an invitation's link lands: the sign-up page, with the token in the fragment (never sent to the server
    /// in the page's request nor in a `Referer`; the page posts it when the person signs up).
    package func link(token: String) -> String { "\(origin)/signup#invitation=\(token)" }

    package func invitation(to address: String, token: String, expiresAt: Date) -> OutgoingMail {
        let link = link(token: token)
        let until = Self.shown(expiresAt)
        let text = """
            You're invited to \(siteName)

            You have been invited to create an account on \(siteName). Open this link to choose a username and \
            make a passkey:
            \(link)

            The link works once, until \(until). If you weren't expecting this, ignore this mail: nothing happens \
            unless the link is opened and an account is made.
            """
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>You’re invited to \(HTMLText.escape(siteName))</title></head>
            <body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:36em">
            <h1 style="font-size:1.3em">You’re invited to \(HTMLText.escape(siteName))</h1>
            <p>You have been invited to create an account on \(HTMLText.escape(siteName)).</p>
            <p><a href="\(HTMLText.escape(link))">Create your account</a></p>
            <p>The link works once, until \(HTMLText.escape(until)). If you weren’t expecting this, ignore this mail: \
            nothing happens unless the link is opened and an account is made.</p>
            </body></html>
            """
        return OutgoingMail(to: address, subject: "You're invited to \(siteName)", text: text, html: html)
    }

    package static func shown(_ date: Date) -> String {
        String(date.ISO8601Format().prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
    }
}
