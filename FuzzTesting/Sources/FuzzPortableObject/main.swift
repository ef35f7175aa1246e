import SesameLanguage

/// A catalog file's bytes through the PO reader, and a parsed header's Plural-Forms through the rule parser and
/// evaluator. Neither may crash or loop; errors are the only refusal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    if let file = try? PortableObject(parsing: text) {
        for entry in file.entries { _ = Catalog.placeholders(in: entry.strings.joined()) }
    }
    if let rule = try? PluralRule(parsing: text) {
        for n in [0, 1, 2, 3, 11, 100, 101, Int.max, Int.min] { _ = rule.index(for: n) }
        _ = rule.json
    }
    return 0
}
