import Foundation
import SQLKit
import SesameLanguage

/// A change to an account's ways in that its owner is told about by mail ("A passkey was added"). Opaque and
/// extensible, like `AuditKind`: each feature declares the notices of its changes in its `<Feature>Vocabulary.swift`
/// and lists them in its part of the vocabulary; the raw value is the outbox row's kind and the `mail.queued` audit
/// detail, the title is the mail's heading and subject, in the words of the account page.
public struct AccountNoticeKind: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    /// The catalog key of what happened, a sentence without its full stop: "A passkey was added to your account"
    /// (`mail.notice.<what>`; the mail's heading, and its subject with the site's name).
    package let titleKey: String

    package init(_ rawValue: String, titleKey: String) {
        self.rawValue = rawValue
        self.titleKey = titleKey
    }

    /// The title in English.
    package var title: String { PageWords.english.catalog.forms(titleKey, in: Catalog.english)?.first ?? titleKey }

    public var description: String { rawValue }
}

/// Tells an account's owner about a change to its ways in, by mail to its verified address. The core declares it;
/// the address feature (`SesameEmail`) implements it and the composition root hands it to the core, so a feature
/// that changes a way in never imports the feature that mails.
package protocol AccountNotices: Sendable {
    /// Writes the mail about `kind` to the outbox, with its audit event, inside the transaction of the change (`db`
    /// is that transaction's database): a rolled-back change sends nothing. Nothing when the account has no verified
    /// address or addresses are off. `details` are lines the mail shows under its sentence ("Device: Chrome on Linux").
    /// `language` is the mail's language, chosen before the transaction (`ServerCore.noticeLanguage`).
    func queue(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail], language: String, in db: any SQLDatabase
    ) async throws

    /// The same in a transaction of its own, for a change already committed in one statement (a passkey sign-in).
    func queue(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail], language: String
    ) async throws

    /// Whether the account gets notices at all (addresses on, a verified address), read without a transaction: a
    /// change committed on its own (a sign-in from a new device) asks first, and an account that gets none costs
    /// one read instead of a language lookup and a write transaction.
    func getsNotices(userID: String) async throws -> Bool
}

/// No mails: a server built without the address feature (and the store's own tests).
package struct NoAccountNotices: AccountNotices {
    package init() {}

    package func queue(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail], language: String, in db: any SQLDatabase
    ) async throws {}

    package func queue(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail], language: String
    ) async throws {}

    package func getsNotices(userID: String) async throws -> Bool { false }
}

/// One notice to give, made by a route (`ServerCore.notice`) and given by its store inside the change's transaction
/// (`give(in:)`), after the change's own writes.
package struct AccountNotice: Sendable {
    package let notices: any AccountNotices
    package let kind: AccountNoticeKind
    package let userID: String
    package let username: String?
    package let clientAddress: String
    package let at: Date
    /// Lines the mail shows under its sentence.
    package let details: [AccountNoticeDetail]
    /// The mail's language: the account's saved choice, else the request's (`ServerCore.noticeLanguage`).
    package let language: String

    package init(
        _ kind: AccountNoticeKind, userID: String, username: String?, clientAddress: String, at: Date,
        details: [AccountNoticeDetail] = [], language: String, notices: any AccountNotices
    ) {
        self.details = details
        self.language = language
        self.kind = kind
        self.userID = userID
        self.username = username
        self.clientAddress = clientAddress
        self.at = at
        self.notices = notices
    }

    /// Writes the mail (if the account gets one) in the transaction whose database is `db`.
    package func give(in db: any SQLDatabase) async throws {
        try await notices.queue(
            kind, userID: userID, username: username, clientAddress: clientAddress, at: at, details: details,
            language: language, in: db)
    }

    /// Writes the mail (if the account gets one) in a transaction of its own.
    package func give() async throws {
        try await notices.queue(
            kind, userID: userID, username: username, clientAddress: clientAddress, at: at, details: details,
            language: language)
    }
}

/// A line a notice shows under its sentence, in the mail's language: a catalog key and its values.
package struct AccountNoticeDetail: Sendable, Equatable {
    package let key: String
    package let values: [String: String]

    package init(_ key: String, _ values: [String: String]) {
        self.key = key
        self.values = values
    }

    /// The device (from its `User-Agent`) and the client address of a sign-in.
    package static func signIn(userAgent: String?, clientAddress: String) -> [AccountNoticeDetail] {
        [
            AccountNoticeDetail("mail.notice.detail-device", ["device": KnownDevices.describe(userAgent: userAgent)]),
            AccountNoticeDetail("mail.notice.detail-address", ["address": clientAddress]),
        ]
    }
}

extension Optional where Wrapped == AccountNotice {
    /// Gives the notice, if there is one, in the transaction whose database is `db`.
    package func give(in db: any SQLDatabase) async throws {
        if let notice = self { try await notice.give(in: db) }
    }
}

extension AccountNoticeKind {
    /// A sign-in from a browser the device cookie does not know (`KnownDevices`); the core's, since passkeys,
    /// passwords and second factors all sign in.
    package static let newDeviceSignIn = AccountNoticeKind(
        "sign_in.new_device", titleKey: "mail.notice.new-device")
}
