import Hummingbird
import SesameCore
import SesameLanguage

extension PageWords {
    /// The catalog's message `key` in the page's language with its `{placeholders}` filled from `values`; the key
    /// itself if the catalog lacks it (the catalog tests hold every key used to the catalog).
    package func sentence(_ key: String, _ values: [String: String] = [:]) -> String {
        (try? catalog.text(key, in: tag, values)) ?? key
    }

    /// The plural message `key` for `count` in the page's language.
    package func sentence(_ key: String, count: Int, _ values: [String: String] = [:]) -> String {
        (try? catalog.plural(key, count: count, in: tag, values)) ?? key
    }
}

extension PageLanguages {
    /// The words of a page answering `request` from `userID` (nil: signed out): their saved choice, then `uiLocales`
    /// when given (an authorization request's `ui_locales`, OpenID Connect Core §3.1.2.1) or else the request's own
    /// `ui_locales` parameter, then `Accept-Language`, then the default.
    package func words(for request: Request, userID: String?, uiLocales: String? = nil) async -> PageWords {
        PageWords(catalog: catalog, tag: await tag(for: request, userID: userID, uiLocales: uiLocales))
    }
}
