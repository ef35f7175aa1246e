import Foundation
import SesameBytes
import SesameLanguage

/// The catalog's words for the mails Sesame writes: `mail.*` keys in the recipient's language with `{site}` filled,
/// times in that language (UTC, said as such), and the HTML part's page with `lang` and `dir`.
package struct MailWords: Sendable {
    package let siteName: String
    package let catalog: Catalog
    package let choice: LanguageChoice

    package init(
        siteName: String, defaultTag: String, catalog: Catalog = (try? PageLanguages.bundled.get()) ?? .empty
    ) {
        self.siteName = siteName
        self.catalog = catalog
        self.choice = LanguageChoice(available: catalog.tags, defaultTag: defaultTag)
    }

    /// The words in `tag` (a catalog tag; anything else is matched as a request's would be, else the default).
    package func `in`(_ tag: String) -> MailText {
        MailText(siteName: siteName, catalog: catalog, tag: choice.match(tag) ?? choice.defaultTag)
    }
}

/// One mail's words, in one language.
package struct MailText: Sendable {
    package let siteName: String
    package let catalog: Catalog
    package let tag: String

    /// `key` with `{site}` and `values` filled; the key itself if the catalog lacks it (the catalog tests hold every
    /// key used to the catalog).
    package func text(_ key: String, _ values: [String: String] = [:]) -> String {
        (try? catalog.text(key, in: tag, values.merging(["site": siteName]) { own, _ in own })) ?? key
    }

    /// A plural message's form for `count`, with `{count}` written as the language writes numbers.
    package func plural(_ key: String, _ count: Int, _ values: [String: String] = [:]) -> String {
        (try? catalog.plural(key, count: count, in: tag, values.merging(["site": siteName]) { own, _ in own }))
            ?? key
    }

    /// A sentence that holds a link (`{link}` in `key`, the link's words in `link`), as HTML: the sentence escaped,
    /// the link an `<a>` to `href`.
    package func linked(_ key: String, link: String, href: String, _ values: [String: String] = [:]) -> String {
        let sentence = text(key, values.merging(["link": "{link}"]) { own, _ in own })
        let anchor = "<a href=\"\(HTMLText.escape(href))\">\(HTMLText.escape(text(link, values)))</a>"
        return sentence.components(separatedBy: "{link}").map(HTMLText.escape).joined(separator: anchor)
    }

    /// A date and time in the language's own long form, in UTC, said as such (`mail.common.time`).
    package func time(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0)!
        calendar.timeZone = utc
        let locale = Locale(identifier: tag == Catalog.pseudo ? Catalog.english : tag)
        let style = Date.FormatStyle(date: .long, time: .shortened, locale: locale, calendar: calendar, timeZone: utc)
        return text("mail.common.time", ["time": date.formatted(style)])
    }

    /// `lang` and `dir` of the language.
    package var direction: String { catalog.languages[tag]?.direction.rawValue ?? "ltr" }

    /// The HTML part: a page in the mail's language and direction, its title as heading.
    package func page(title: String, _ body: String) -> String {
        """
        <!doctype html>
        <html lang="\(HTMLText.escape(tag))" dir="\(direction)"><head><meta charset="utf-8"><title>\(HTMLText.escape(title))</title></head>
        <body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:36em">
        <h1 style="font-size:1.3em">\(HTMLText.escape(title))</h1>
        \(body)
        </body></html>
        """
    }
}
