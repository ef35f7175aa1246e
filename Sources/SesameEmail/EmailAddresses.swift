import Foundation
import SMTP

/// Email addresses as accounts keep them: what is accepted, and the key that is unique.
package enum EmailAddresses {
    /// Trims the given text and accepts it when mail can be sent to it (`MailAddress`: printable ASCII
    /// `local@domain`, at most 254 characters, nothing that could break a header or a command) and its domain has
    /// a dot; nil otherwise. The address is kept as given (its case included), for the mails.
    package static func validate(_ raw: String) -> String? {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let address = try? MailAddress(text), address.domain.contains("."),
            !address.domain.hasPrefix("."), !address.domain.hasPrefix("-")
        else { return nil }
        return address.value
    }

    /// The form that is unique across accounts: lower-cased, so `Lin@Example.NET` and `lin@example.net` are one
    /// address. (Local parts are case-sensitive in RFC 5321, but no mail system people use treats them so, and
    /// two accounts on one mailbox would defeat the point of a unique address.)
    package static func key(_ address: String) -> String {
        address.lowercased()
    }

    /// The address with most of its local part hidden (`l***@example.net`), for mail to someone who may no
    /// longer hold the account.
    package static func masked(_ address: String) -> String {
        guard let at = address.firstIndex(of: "@"), let first = address.first else { return "***" }
        return "\(first)***\(address[at...])"
    }
}
