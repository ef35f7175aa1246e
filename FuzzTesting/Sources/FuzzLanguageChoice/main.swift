import SesameLanguage

/// A request's `Accept-Language` header and `ui_locales` parameter through the language choice.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let choice = LanguageChoice(available: ["en", "ar", "de", "es", "ja", "ko", "en-XA"], defaultTag: "en")
    _ = choice.choose(saved: text, uiLocales: text, acceptLanguage: text)
    _ = LanguageChoice.acceptLanguage(text)
    return 0
}
