import Foundation
import SesameBytes
import SesameCore
import SesameLanguage

/// The address feature's mails, each with a text part and an HTML part, in the words of the pages: every sentence is
/// a `mail.<kind>.<part>` key of the catalog, in the language each method is given (the recipient's saved choice,
/// else the language of the request that caused the mail, else the default: the callers choose it).
package struct EmailMails: Sendable {
    /// The site's name and origin (links are absolute, on the configured origin).
    package let siteName: String
    package let origin: String
    package let words: MailWords

    package init(_ configuration: ServerConfiguration) {
        siteName = configuration.rpName
        origin = configuration.origin.hasSuffix("/") ? String(configuration.origin.dropLast()) : configuration.origin
        words = MailWords(siteName: siteName, defaultTag: configuration.defaultLanguage)
    }

    /// Outbox kinds (the `kind` column; the `mail.gave_up` audit detail).
    package static let verificationKind = "email.verification"
    package static let inUseKind = "email.in_use"
    package static let changedKind = "email.changed"

    /// Where a verification link lands. The token is in the fragment: browsers never send it to the server in the
    /// page's request nor in a `Referer`, so no access log holds it; the page posts it when the person confirms.
    package func verificationLink(token: String) -> String { "\(origin)/account/email/verify#\(token)" }

    /// The code and the link for a new address.
    package func verification(to address: String, code: String, token: String, minutes: Int, tag: String)
        -> OutgoingMail
    {
        let w = words.in(tag)
        let link = verificationLink(token: token)
        let title = w.text("mail.verification.heading")
        let intro = w.text("mail.verification.intro")
        let codeLabel = w.text("mail.common.code-label")
        let expiry = w.plural("mail.verification.expiry", minutes)
        let text = """
            \(title)

            \(intro)

            \(codeLabel) \(code)

            \(w.text("mail.verification.text-link"))
            \(link)

            \(expiry)
            """
        let html = w.page(
            title: title,
            """
            <p>\(Self.escape(intro))</p>
            <p>\(Self.escape(codeLabel)) <strong dir="ltr" style="font-size:1.4em;letter-spacing:0.1em">\(code)</strong></p>
            <p>\(Self.escape(w.text("mail.verification.html-link")))</p>
            <p><a href="\(Self.escape(link))">\(Self.escape(w.text("mail.verification.link-label", ["address": address])))</a></p>
            <p>\(Self.escape(expiry))</p>
            """)
        return OutgoingMail(to: address, subject: w.text("mail.verification.subject"), text: text, html: html)
    }

    /// Sent in place of a code when another account already verified the address: its holder learns someone tried,
    /// the person who typed it learns nothing (their page says a code was sent, as for any address).
    package func inUse(to address: String, tag: String) -> OutgoingMail {
        let w = words.in(tag)
        let title = w.text("mail.in-use.heading")
        let body = w.text("mail.in-use.body")
        let text = """
            \(title)

            \(body)

            \(w.text("mail.in-use.text-sign-in", ["link": "\(origin)/signin"]))
            """
        let html = w.page(
            title: title,
            """
            <p>\(Self.escape(body))</p>
            <p>\(w.linked("mail.in-use.html-sign-in", link: "mail.in-use.sign-in-link", href: "\(origin)/signin"))</p>
            """)
        return OutgoingMail(to: address, subject: w.text("mail.in-use.subject"), text: text, html: html)
    }

    /// To the old address, once a new one is verified.
    package func changed(from old: String, to new: String, tag: String) -> OutgoingMail {
        let w = words.in(tag)
        let shown = EmailAddresses.masked(new)
        let title = w.text("mail.changed.heading")
        let body = w.text("mail.changed.body", ["address": shown])
        let text = """
            \(title)

            \(body)

            \(w.text("mail.changed.text-check", ["link": "\(origin)/account"]))
            """
        let html = w.page(
            title: title,
            """
            <p>\(Self.escape(body))</p>
            <p>\(w.linked("mail.changed.html-check", link: "mail.changed.check-link", href: "\(origin)/account"))</p>
            """)
        return OutgoingMail(to: old, subject: w.text("mail.changed.subject"), text: text, html: html)
    }

    /// A change to the account's ways in (`AccountNoticeKind`), to its verified address: what changed and when, a
    /// link to the account page, and what to do if it wasn't them. `details` are shown under the sentence, one a line.
    package func notice(
        _ kind: AccountNoticeKind, to address: String, username: String?, at: Date,
        details: [AccountNoticeDetail] = [], tag: String
    ) -> OutgoingMail {
        let w = words.in(tag)
        let what = w.text(kind.titleKey)
        let when = w.time(at)
        let sentence =
            if let username {
                w.text("mail.notice.sentence-username", ["what": what, "username": username, "time": when])
            } else {
                w.text("mail.notice.sentence", ["what": what, "time": when])
            }
        let lines = details.map { w.text($0.key, $0.values) }
        let listed = lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n\n"
        let listedHTML = lines.isEmpty ? "" : "<ul>" + lines.map { "<li>\(Self.escape($0))</li>" }.joined() + "</ul>\n"
        let fine = w.text("mail.notice.if-you")
        let text = """
            \(what)

            \(sentence)

            \(listed)\(fine)

            \(w.text("mail.notice.text-warning", ["link": "\(origin)/account"]))
            """
        let html = w.page(
            title: what,
            """
            <p>\(Self.escape(sentence))</p>
            \(listedHTML)<p>\(Self.escape(fine))</p>
            <p>\(w.linked("mail.notice.html-warning", link: "mail.notice.warning-link", href: "\(origin)/account"))</p>
            """)
        return OutgoingMail(to: address, subject: w.text("mail.notice.subject", ["what": what]), text: text, html: html)
    }

    package static let recoveryKind = "email_recovery.code"

    /// The code of recovery by email: what it does (only adding a passkey or security key), how long it works, and
    /// what to do if the person did not ask.
    package func recoveryCode(to address: String, username: String, code: String, minutes: Int, tag: String)
        -> OutgoingMail
    {
        let w = words.in(tag)
        let title = w.text("mail.recovery-code.heading")
        let intro = w.text("mail.recovery-code.intro", ["username": username])
        let codeLabel = w.text("mail.common.code-label")
        let use = w.plural("mail.recovery-code.use", minutes)
        let ignore = w.text("mail.recovery-code.ignore")
        let text = """
            \(title)

            \(intro)

            \(codeLabel) \(code)

            \(use)

            \(ignore)
            """
        let html = w.page(
            title: title,
            """
            <p>\(Self.escape(intro))</p>
            <p>\(Self.escape(codeLabel)) <strong dir="ltr" style="font-size:1.4em;letter-spacing:0.1em">\(code)</strong></p>
            <p>\(Self.escape(use))</p>
            <p>\(Self.escape(ignore))</p>
            """)
        return OutgoingMail(to: address, subject: w.text("mail.recovery-code.subject"), text: text, html: html)
    }

    package static let recoveryLinkKind = "recovery_link"

    /// Where a recovery link lands; the token is in the fragment, so no server log holds it (the page posts it).
    package func recoveryLink(token: String) -> String { "\(origin)/recover/link#\(token)" }

    /// The recovery link an administrator made, to the person's verified address.
    package func recoveryLink(to address: String, username: String, link: String, hours: Int, tag: String)
        -> OutgoingMail
    {
        let w = words.in(tag)
        let title = w.text("mail.recovery-link.heading")
        let intro = w.text("mail.recovery-link.intro", ["username": username])
        let use = w.plural("mail.recovery-link.use", hours)
        let ignore = w.text("mail.recovery-link.ignore")
        let text = """
            \(title)

            \(intro)

            \(link)

            \(use)

            \(ignore)
            """
        let html = w.page(
            title: title,
            """
            <p>\(Self.escape(intro))</p>
            <p><a href="\(Self.escape(link))">\(Self.escape(w.text("mail.recovery-link.link-label")))</a></p>
            <p>\(Self.escape(use))</p>
            <p>\(Self.escape(ignore))</p>
            """)
        return OutgoingMail(to: address, subject: w.text("mail.recovery-link.subject"), text: text, html: html)
    }

    /// A time as mails show it, in the mail's language and in UTC, said as such: `November 28, 2026 at 5:50 PM UTC`.
    package static func shown(_ date: Date, _ tag: String) -> String {
        MailWords(siteName: "", defaultTag: Catalog.english).in(tag).time(date)
    }

    package static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
