import Foundation
import WebAuthn

/// Feeds the input to the provider-icon check as an SVG data URI. Whatever it keeps must not contain an element that
/// runs script or embeds a document in the SVG or default namespace.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: start, count: count))
    let uri = "data:image/svg+xml;base64," + bytes.base64EncodedString()
    if let icon = ProviderIcon(dataURI: uri) {
        let text = String(decoding: icon.bytes, as: UTF8.self).lowercased()
        for marker in ["<script", "<foreignobject", "<iframe", "<image", "<a ", "<set", "<animate"] {
            precondition(!text.contains(marker), "kept an icon with \(marker)")
        }
    }
    return 0
}
