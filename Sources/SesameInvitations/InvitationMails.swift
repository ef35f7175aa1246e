import Foundation
import SesameBytes
import SesameCore

/// The invitation's mail: a text part and an HTML part, the link on the configured origin.
package struct InvitationMails: Sendable {
    package let siteName: String
    package let origin: String
    package let words: MailWords

    package init(_ configuration: ServerConfiguration) {
        siteName = configuration.rpName
        origin = configuration.origin.hasSuffix("/") ? String(configuration.origin.dropLast()) : configuration.origin
        words = MailWords(siteName: siteName, defaultTag: configuration.defaultLanguage)
    }

    /// The outbox kind (the `kind` column; the `mail.gave_up` audit detail).
    package static let kind = "invitation"

    /// Where an invitation's link lands: the sign-up page, with the token in the fragment (never sent to the server
    /// in the page's request nor in a `Referer`; the page posts it when the person signs up).
    package func link(token: String) -> String { "\(origin)/signup#invitation=\(token)" }

    /// The invitation's mail in `tag` (the inviting request's language, or one the admin API named), else the
    /// default language.
    package func invitation(to address: String, token: String, expiresAt: Date, tag: String? = nil) -> OutgoingMail {
        let w = words.in(tag ?? words.choice.defaultTag)
        let link = link(token: token)
        let title = w.text("mail.invitation.subject")
        let expiry = w.text("mail.invitation.expiry", ["time": w.time(expiresAt)])
        let text = """
            \(title)

            \(w.text("mail.invitation.text-intro"))
            \(link)

            \(expiry)
            """
        let html = w.page(
            title: title,
            """
            <p>\(HTMLText.escape(w.text("mail.invitation.html-intro")))</p>
            <p><a href="\(HTMLText.escape(link))">\(HTMLText.escape(w.text("mail.invitation.link-label")))</a></p>
            <p>\(HTMLText.escape(expiry))</p>
            """)
        return OutgoingMail(to: address, subject: title, text: text, html: html)
    }

    /// A time as the command line and the admin API's listing show it: `2026-11-28 17:50 UTC`.
    package static func shown(_ date: Date) -> String {
        String(date.ISO8601Format().prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
    }
}
