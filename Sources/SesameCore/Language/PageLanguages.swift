import Foundation
import Hummingbird
import SesameLanguage

/// The languages people have saved on their account page, for the core and the features that write to a person
/// (pages, mails, the `locale` claim). The account feature gives its store's; without it nobody has saved one.
package protocol LanguagePreferences: Sendable {
    /// The tag `userID` saved, or nil.
    func savedLanguage(of userID: String) async throws -> String?
}

package struct NoLanguagePreferences: LanguagePreferences {
    package init() {}
    package func savedLanguage(of userID: String) async throws -> String? { nil }
}

/// The catalog and the rule that picks a request's language (`LanguageChoice`): saved choice, `ui_locales`,
/// `Accept-Language`, then `defaultLanguage`.
package struct PageLanguages: Sendable {
    package let catalog: Catalog
    package let choice: LanguageChoice
    package let preferences: any LanguagePreferences

    /// The bundled catalog, read once per process; if it cannot be read, a catalog of no keys (pages that name
    /// keys then fail to render, and say so in the log).
    package static let bundled: Result<Catalog, LanguageError> = Result { () throws(LanguageError) in
        try Catalog.bundled()
    }

    package init(catalog: Catalog, defaultTag: String, preferences: any LanguagePreferences) {
        self.catalog = catalog
        self.choice = LanguageChoice(available: catalog.tags, defaultTag: defaultTag)
        self.preferences = preferences
    }

    /// The language for a request: `saved` first, then `uiLocales` when given (an authorization request's
    /// `ui_locales`) or else the request's own `ui_locales` query parameter, then its `Accept-Language`.
    package func tag(for request: Request, saved: String?, uiLocales: String? = nil) -> String {
        choice.choose(
            saved: saved, uiLocales: uiLocales ?? request.uri.queryParameters["ui_locales"].map(String.init),
            acceptLanguage: request.headers[.acceptLanguage])
    }

    /// The language for a request from `userID` (nil: signed out), reading their saved choice.
    package func tag(for request: Request, userID: String?, uiLocales: String? = nil) async -> String {
        var saved: String?
        if let userID { saved = try? await preferences.savedLanguage(of: userID) }
        return tag(for: request, saved: saved, uiLocales: uiLocales)
    }

    /// The language for writing to `userID` outside a request (a mail): their saved choice, else `fallback` (the
    /// language of the request that caused it), else the default.
    package func tag(forUser userID: String?, fallback: String? = nil) async -> String {
        if let userID, let saved = try? await preferences.savedLanguage(of: userID), let tag = choice.match(saved) {
            return tag
        }
        return fallback.flatMap { choice.match($0) } ?? choice.defaultTag
    }

    /// `key` in `tag`, filled; the key itself if the catalog lacks it (a test holds every key used to the catalog).
    package func text(_ key: String, _ tag: String, _ values: [String: String] = [:]) -> String {
        (try? catalog.text(key, in: tag, values)) ?? key
    }

    package func plural(_ key: String, count: Int, _ tag: String, _ values: [String: String] = [:]) -> String {
        (try? catalog.plural(key, count: count, in: tag, values)) ?? key
    }

    /// `lang` and `dir` for a page's `<html>` element.
    package func attributes(_ tag: String) -> (lang: String, dir: String) {
        (tag, catalog.languages[tag]?.direction.rawValue ?? "ltr")
    }
}

/// What a template needs to fill `{{t:key}}`: the catalog and the page's language.
package struct PageWords: Sendable {
    package let catalog: Catalog
    package let tag: String

    package init(catalog: Catalog, tag: String) {
        self.catalog = catalog
        self.tag = tag
    }

    /// English from the bundled catalog.
    package static let english = PageWords(
        catalog: (try? PageLanguages.bundled.get()) ?? .empty, tag: Catalog.english)
}
