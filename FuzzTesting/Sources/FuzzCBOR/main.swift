import CBOR

/// Decodes the input under both rule sets; whatever decodes must re-encode and decode to the same item
/// (canonical input must re-encode to the same bytes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    if let item = try? CBORDecoder(options: .ctap2).decode(bytes) {
        let encoded = CBOREncoder.encode(item)
        precondition(encoded == bytes, "canonical input did not re-encode to itself")
    }
    if let item = try? CBORDecoder(options: .lenientMapOrder).decode(bytes) {
        // Canonical re-encoding sorts map keys, so compare encodings rather than entry order.
        let encoded = CBOREncoder.encode(item)
        let again = try? CBORDecoder(options: .ctap2).decode(encoded)
        precondition(
            again.map(CBOREncoder.encode) == encoded || containsNaN(item), "re-encoded item did not decode to itself")
    }
    _ = try? CBORDecoder().decodePrefix(bytes)
    return 0
}

private func containsNaN(_ item: CBOR) -> Bool {
    switch item {
    case .float(let d): return d.isNaN
    case .array(let a): return a.contains(where: containsNaN)
    case .map(let m): return m.contains { containsNaN($0.key) || containsNaN($0.value) }
    case .tagged(_, let inner): return containsNaN(inner)
    default: return false
    }
}
