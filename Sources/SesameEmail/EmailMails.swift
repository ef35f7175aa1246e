import Foundation
import SesameBytes
import SesameCore

/// The address feature's mails, each with a text part and an HTML part, in the words of the pages.
package struct EmailMails: Sendable {
    /// The site's name and origin (links are absolute, on the configured origin).
    package let siteName: String
    package let origin: String

    package init(_ configuration: ServerConfiguration) {
        siteName = configuration.rpName
        origin = configuration.origin.hasSuffix("/") ? String(configuration.origin.dropLast()) : configuration.origin
    }

    /// Outbox kinds (the `kind` column; the `mail.gave_up` audit detail).
    package static let verificationKind = "email.verification"
    package static let inUseKind = "email.in_use"
    package static let changedKind = "email.changed"

    /// Where a verification link lands. The token is in the fragment: browsers never send it to the server in the
    /// page's request nor in a `Referer`, so no access log holds it; the page posts it when the person confirms.
    package func verificationLink(token: String) -> String { "\(origin)/account/email/verify#\(token)" }

    /// The code and the link for a new address.
    package func verification(to address: String, code: String, token: String, minutes: Int) -> OutgoingMail {
        let link = verificationLink(token: token)
        let text = """
            Confirm your email address

            Someone, hopefully you, asked to use this address for an account on \(siteName).

            Your code: \(code)

            Type it on your account page, or open this link to confirm:
            \(link)

            The code and the link work once, for \(minutes) minutes. If you didn't ask for this, ignore this mail: \
            nothing changes and the address is not added.
            """
        let html = Self.page(
            title: "Confirm your email address",
            """
            <p>Someone, hopefully you, asked to use this address for an account on \(Self.escape(siteName)).</p>
            <p>Your code: <strong style="font-size:1.4em;letter-spacing:0.1em">\(code)</strong></p>
            <p>Type it on your account page, or confirm with this link:</p>
            <p><a href="\(Self.escape(link))">Confirm \(Self.escape(address))</a></p>
            <p>The code and the link work once, for \(minutes) minutes. If you didn’t ask for this, ignore this mail: \
            nothing changes and the address is not added.</p>
            """)
        return OutgoingMail(
            to: address, subject: "Confirm your email address for \(siteName)", text: text, html: html)
    }

    /// Sent in place of a code when another account already verified the address: its holder learns someone tried,
    /// the person who typed it learns nothing (their page says a code was sent, as for any address).
    package func inUse(to address: String) -> OutgoingMail {
        let text = """
            Your email address was given for another account

            Someone asked to use this address for another account on \(siteName). It already belongs to your \
            account, so nothing was changed and no code was sent.

            If that was you, sign in to your account with a passkey or your password: \(origin)/signin
            """
        let html = Self.page(
            title: "Your email address was given for another account",
            """
            <p>Someone asked to use this address for another account on \(Self.escape(siteName)). It already belongs \
            to your account, so nothing was changed and no code was sent.</p>
            <p>If that was you, <a href="\(Self.escape(origin))/signin">sign in to your account</a> with a passkey \
            or your password.</p>
            """)
        return OutgoingMail(
            to: address, subject: "Your email address was given for another account on \(siteName)", text: text,
            html: html)
    }

    /// To the old address, once a new one is verified.
    package func changed(from old: String, to new: String) -> OutgoingMail {
        let shown = EmailAddresses.masked(new)
        let text = """
            Your email address was changed

            The email address of your account on \(siteName) is now \(shown). Mail about your account no longer \
            comes to this address.

            If you didn't make this change, sign in and look at your account's recent activity: \(origin)/account
            """
        let html = Self.page(
            title: "Your email address was changed",
            """
            <p>The email address of your account on \(Self.escape(siteName)) is now \(Self.escape(shown)). Mail \
            about your account no longer comes to this address.</p>
            <p>If you didn’t make this change, <a href="\(Self.escape(origin))/account">sign in and look at your \
            account’s recent activity</a>.</p>
            """)
        return OutgoingMail(to: old, subject: "Your email address for \(siteName) was changed", text: text, html: html)
    }

    /// A change to the account's ways in (`AccountNoticeKind`), to its verified address: what changed and when, a
    /// link to the account page, and what to do if it wasn't them. `details` are shown under the sentence, one a line.
    package func notice(
        _ kind: AccountNoticeKind, to address: String, username: String?, at: Date, details: [String] = []
    ) -> OutgoingMail {
        let when = Self.shown(at)
        let who = username.map { " (username \($0))" } ?? ""
        let sentence = "\(kind.title) on \(siteName)\(who), at \(when)."
        let listed = details.isEmpty ? "" : details.joined(separator: "\n") + "\n\n"
        let listedHTML =
            details.isEmpty ? "" : "<ul>" + details.map { "<li>\(Self.escape($0))</li>" }.joined() + "</ul>\n"
        let text = """
            \(kind.title)

            \(sentence)

            \(listed)If this was you, there is nothing to do.

            If this wasn't you, someone else may be able to sign in as you. Sign in at once, remove the passkeys, \
            password and other ways in you don't recognize, and look at your account's recent activity: \
            \(origin)/account
            """
        let html = Self.page(
            title: kind.title,
            """
            <p>\(Self.escape(sentence))</p>
            \(listedHTML)<p>If this was you, there is nothing to do.</p>
            <p>If this wasn’t you, someone else may be able to sign in as you. <a href="\(Self.escape(origin))/account">\
            Sign in at once</a>, remove the passkeys, password and other ways in you don’t recognize, and look at your \
            account’s recent activity.</p>
            """)
        return OutgoingMail(to: address, subject: "\(kind.title) on \(siteName)", text: text, html: html)
    }

    package static let recoveryKind = "email_recovery.code"

    /// The code of recovery by email: what it does (only adding a passkey or security key), how long it works, and
    /// what to do if the person did not ask.
    package func recoveryCode(to address: String, username: String, code: String, minutes: Int) -> OutgoingMail {
        let text = """
            Your sign-in code

            Someone, hopefully you, asked to sign in to the account \(username) on \(siteName) without a passkey.

            Your code: \(code)

            Type it on the page that asked for it. It works once, for \(minutes) minutes, and only lets you add a \
            new passkey or security key to your account.

            If you didn't ask for it, ignore this mail and keep this mailbox safe: whoever can read it could use \
            such a code.
            """
        let html = Self.page(
            title: "Your sign-in code",
            """
            <p>Someone, hopefully you, asked to sign in to the account \(Self.escape(username)) on \
            \(Self.escape(siteName)) without a passkey.</p>
            <p>Your code: <strong style="font-size:1.4em;letter-spacing:0.1em">\(code)</strong></p>
            <p>Type it on the page that asked for it. It works once, for \(minutes) minutes, and only lets you add a \
            new passkey or security key to your account.</p>
            <p>If you didn’t ask for it, ignore this mail and keep this mailbox safe: whoever can read it could use \
            such a code.</p>
            """)
        return OutgoingMail(to: address, subject: "Your sign-in code for \(siteName)", text: text, html: html)
    }

    package static let recoveryLinkKind = "recovery_link"

    /// Where a recovery link lands; the token is in the fragment, so no server log holds it (the page posts it).
    package func recoveryLink(token: String) -> String { "\(origin)/recover/link#\(token)" }

    /// The recovery link an administrator made, to the person's verified address.
    package func recoveryLink(to address: String, username: String, link: String, hours: Int) -> OutgoingMail {
        let text = """
            A link to get back into your account

            An administrator of \(siteName) made a recovery link for your account \(username):

            \(link)

            It works once, for \(hours) hours, and only lets you add a new passkey or security key to your account.

            If you did not ask for it, ignore this mail and tell your administrator.
            """
        let html = Self.page(
            title: "A link to get back into your account",
            """
            <p>An administrator of \(Self.escape(siteName)) made a recovery link for your account \
            \(Self.escape(username)):</p>
            <p><a href="\(Self.escape(link))">Add a passkey to your account</a></p>
            <p>It works once, for \(hours) hours, and only lets you add a new passkey or security key to your \
            account.</p>
            <p>If you did not ask for it, ignore this mail and tell your administrator.</p>
            """)
        return OutgoingMail(
            to: address, subject: "A recovery link for your account on \(siteName)", text: text, html: html)
    }

    /// A time as mails show it: `2026-11-28 17:50 UTC`.
    package static func shown(_ date: Date) -> String {
        let iso = date.ISO8601Format()  // 2026-11-28T17:50:12Z
        return String(iso.prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
    }

    private static func page(title: String, _ body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title></head>
        <body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:36em">
        <h1 style="font-size:1.3em">\(escape(title))</h1>
        \(body)
        </body></html>
        """
    }

    package static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
