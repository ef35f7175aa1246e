import NIOCore

/// The client address that rate limits and the audit log use.
///
/// Without `trustForwardedFor` it is the TCP peer. Behind proxies it comes from `X-Forwarded-For`, read from the
/// right: each proxy appends the address it saw, so with `hops` proxies of your own the entry `hops` places from
/// the right is the one your outermost proxy appended, the real client. Everything left of it was written by the
/// client and is ignored. The entry must be an IPv4 or IPv6 address (a port, as some proxies add, is dropped); the
/// result is the address in canonical form. A header with fewer entries than `hops`, or an entry that is not an
/// address, leaves the TCP peer as the client address: the request did not come through the whole chain.
package enum ClientAddress {
    /// The client address for a request whose peer is `peer` and whose `X-Forwarded-For` field lines are `forwarded`
    /// (several lines are one list, in order, as RFC 9110 §5.3 combines them).
    package static func resolve(peer: String, forwarded: [String], trustForwardedFor: Bool, hops: Int) -> String {
        guard trustForwardedFor, hops >= 1, !forwarded.isEmpty else { return peer }
        let entries = forwarded.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        guard entries.count >= hops, entries.count <= 64 else { return peer }
        let entry = entries[entries.count - hops].trimmingCharacters(in: .whitespaces)
        return canonical(entry) ?? peer
    }

    /// `entry` as an IP address in canonical form, or nil. Accepts `1.2.3.4`, `1.2.3.4:port`, `2001:db8::1` and
    /// `[2001:db8::1]:port`.
    package static func canonical(_ entry: String) -> String? {
        guard !entry.isEmpty, entry.utf8.count <= 64 else { return nil }
        var address = Substring(entry)
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]") else { return nil }
            let rest = address[address.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            address = address[address.index(after: address.startIndex)..<close]
        } else if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":") {
            // IPv4 with a port; an IPv6 address without brackets has two colons or more.
            guard isPort(address[address.index(after: colon)...]) else { return nil }
            address = address[..<colon]
        }
        guard let parsed = try? SocketAddress(ipAddress: String(address), port: 0) else { return nil }
        return parsed.ipAddress
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber)
            && (Int(text) ?? 70000) <= 65535
    }
}
