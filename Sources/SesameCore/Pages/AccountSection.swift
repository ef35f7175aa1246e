import Foundation

/// One card of the account page (`/account`) with the script that drives it, as the feature that serves its API
/// gives it: passkeys' card is `SesamePasskeys`', the verification codes' `SesameSecondFactors`', and so on.
///
/// A feature keeps its sections' files in its own bundle (`Resources/AccountPage/`: the card's HTML fragment, with
/// `{{t:key}}` for every word, and its script) and lists each as a value (`AccountSection.passkeys`, in
/// `<Feature>AccountPage.swift`). The composition root joins them (`AccountSection.server`; a name, a script or a
/// position two sections declare stops the process there) and hands them to `SesameWeb`, which places the cards on
/// the page by `position`, serves their scripts under `/static/` and has the page load them after its shared
/// script (`account.js`, with which each section's script registers itself).
package struct AccountSection: Sendable {
    /// The section's name: its fragment is `<name>.html` in `folder`.
    package let name: String
    /// Who gives it (a target's name), for the message that names a duplicate.
    package let owner: String
    /// Where the card stands on the page: cards are placed by ascending position.
    package let position: Int
    /// The folder of the owner's bundle that holds the fragment and the scripts; nil when the bundle lacks it (the
    /// pages then answer 503, as they do when `SesameWeb`'s own files are missing).
    package let folder: URL?
    /// The section's scripts (file names in `folder`), served as `/static/<name>` and loaded by the page in order.
    package let scripts: [String]
    /// The catalog keys the section's words are under, by prefix: the page gives its scripts these messages.
    package let messagePrefixes: [String]

    package init(
        name: String, owner: String, position: Int, folder: URL?, scripts: [String], messagePrefixes: [String]
    ) {
        self.name = name
        self.owner = owner
        self.position = position
        self.folder = folder
        self.scripts = scripts
        self.messagePrefixes = messagePrefixes
    }

    /// The fragment's file name in `folder`.
    package var template: String { "\(name).html" }

    /// The `AccountPage` folder of a feature's bundle (`Bundle.module` in the feature's target).
    package static func folder(in bundle: Bundle) -> URL? {
        bundle.url(forResource: "AccountPage", withExtension: nil, subdirectory: "Resources")
    }

    /// Every name, script or position two sections declare, as `"kind value: owner, owner"`; empty when each is
    /// declared once.
    package static func duplicates(in sections: [AccountSection]) -> [String] {
        var owners: [String: [String]] = [:]
        var order: [String] = []
        func note(_ word: String, _ owner: String) {
            if owners[word] == nil { order.append(word) }
            owners[word, default: []].append(owner)
        }
        for section in sections {
            note("account section \(section.name)", section.owner)
            note("account section position \(section.position)", section.owner)
            for script in section.scripts { note("account section script \(script)", section.owner) }
        }
        return order.compactMap { word in
            let who = owners[word] ?? []
            return who.count > 1 ? "\(word): \(who.joined(separator: ", "))" : nil
        }
    }

    /// The sections in page order; a name, script or position declared twice is a programming error and stops the
    /// process.
    package static func joined(_ sections: [AccountSection]) -> [AccountSection] {
        let duplicates = duplicates(in: sections)
        precondition(duplicates.isEmpty, "declared twice: \(duplicates.joined(separator: "; "))")
        return sections.sorted { $0.position < $1.position }
    }
}
