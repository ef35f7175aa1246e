import ArgumentParser
import Foundation
import Keychain
import WebAuthn

// `sesame keychain share | accept`: giving a copy of an item to another person's keychain.

struct KeychainShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Offer a copy of an item to another keychain; list (--list) or withdraw (--revoke) offers.",
        discussion: """
            --to takes the recipient's sharing key (`sesame keychain status` shows it: sesame-share:...). Before \
            anything is sent, compare its fingerprint with the one the recipient reads to you: give it as \
            --fingerprint, or confirm it on the terminal. The item is sealed to that key; the server cannot read \
            it or redirect it.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The item's ID (or a unique prefix), or a site or name in it.")
    var query: String?

    @Option(help: "The recipient's sharing key (sesame-share:...).")
    var to: String?

    @Option(help: "The recipient's fingerprint as they read it to you.")
    var fingerprint: String?

    @Flag(help: "List the offers this keychain made.")
    var list = false

    @Option(help: "Withdraw the offer with this ID (see --list).")
    var revoke: String?

    func run() async throws {
        let keychain = try options.open()
        if list {
            for share in keychain.sentShares {
                print(
                    "\(Base64URL.encode(share.id))  to \(share.recipientFingerprint)  \(share.itemTitle)  \(isoDate(share.created))"
                )
            }
            return
        }
        let transport = try options.transport()
        if let revoke {
            let id = try keychainCall { () throws(KeychainError) -> [UInt8] in
                guard let id = try? Base64URL.decode(revoke), id.count == 16 else {
                    throw KeychainError(.itemNotFound, reason: "not a share ID")
                }
                return id
            }
            try await keychainCall { try await keychain.revokeShare(id: id, transport: transport) }
            try keychainCall { try keychain.save() }
            print("Withdrawn.")
            return
        }
        guard let query, let to else { throw keychainUsage("give the item and --to, or --list, or --revoke") }
        let recipient = try keychainCall { try SharingKey(text: to) }
        let item = try keychainCall { try keychain.item(matching: query) }
        print("Recipient's key fingerprint: \(recipient.fingerprint)")
        var confirmed = fingerprint
        if confirmed == nil {
            guard Terminal.isInteractive else { throw keychainUsage("give --fingerprint (read it from the recipient)") }
            confirmed = try Terminal.readLine("Type the fingerprint the recipient reads to you: ")
        }
        let sent = try await keychainCall {
            try await keychain.share(
                item.id, to: recipient, confirmedFingerprint: confirmed ?? "", transport: transport)
        }
        try keychainCall { try keychain.save() }
        print("Offered \(item.title) as share \(Base64URL.encode(sent.id)).")
    }
}

struct KeychainAcceptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept",
        abstract: "List items other keychains offer to this one, or accept one into the vault.",
        discussion: """
            Without an ID, lists the offers with each sender's key fingerprint. With one, accepts it as a new item. \
            Check the sender's fingerprint first: give it as --from (required without a terminal) or confirm it.
            """
    )

    @OptionGroup var options: KeychainOptions

    @Argument(help: "The offer's ID (see the list).")
    var id: String?

    @Option(help: "The sender's fingerprint as they read it to you.")
    var from: String?

    func run() async throws {
        let keychain = try options.open()
        let transport = try options.transport()
        let offers = try await keychainCall { try await keychain.incomingShares(transport: transport) }
        guard let id else {
            if offers.isEmpty { print("No offers.") }
            for offer in offers { print("\(Base64URL.encode(offer.id))  from \(offer.sender.fingerprint)") }
            return
        }
        guard let offer = offers.first(where: { Base64URL.encode($0.id) == id }) else {
            throw keychainFailure(KeychainError(.itemNotFound, reason: "no offer with this ID"))
        }
        print("Sender's key fingerprint: \(offer.sender.fingerprint)")
        var expected = from
        if expected == nil {
            guard Terminal.isInteractive else { throw keychainUsage("give --from (the sender's fingerprint)") }
            expected = try Terminal.readLine("Type the fingerprint the sender reads to you: ")
        }
        let item = try await keychainCall {
            try await keychain.acceptShare(id: offer.id, expectedSender: expected, transport: transport)
        }
        try keychainCall { try keychain.save() }
        print("Accepted as \(item.id.text) (\(item.title)).")
    }
}
