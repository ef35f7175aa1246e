/// DNS names as the cookie domain and forward-auth settings hold them: lowercase LDH labels (letters, digits,
/// hyphens) of 1…63 characters joined by dots, 253 characters at most, no trailing dot. IP addresses and anything
/// else a URL parser might read two ways are refused.
package enum DomainName {
    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 253 else { return false }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for label in labels {
            guard (1...63).contains(label.count), label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                label.allSatisfy({ isLDH($0) })
            else { return false }
        }
        // A dotted-decimal address is a host, but not a domain name.
        return !labels.allSatisfy { $0.allSatisfy { (0x30...0x39).contains($0) } }
    }

    package static func isLDH(_ byte: UInt8) -> Bool {
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
    }

    /// Whether `domain` covers `host`: the same name, or a subdomain of it (a label boundary, so `example.com`
    /// covers `app.example.com` but not `badexample.com`).
    package static func covers(_ domain: String, host: String) -> Bool {
        host == domain || host.hasSuffix("." + domain)
    }
}
