import Foundation
import SesameCore
import SesameEmail

/// `sesame invites create|list|revoke`: the operator's side of invitations (docs/invitations.md).
package struct InvitationAdmin: Sendable {
    package let store: any InvitationStore
    package let groups: any AccountGroups
    package let mails: InvitationMails

    package init(store: any InvitationStore, groups: any AccountGroups, configuration: ServerConfiguration) {
        self.store = store
        self.groups = groups
        self.mails = InvitationMails(configuration)
    }

    /// How long an invitation may live: five minutes to ninety days.
    package static let lifetimes: ClosedRange<TimeInterval> = 300...(90 * 86400)

    /// `7d`, `12h`, `30m` (or plain seconds).
    package static func lifetime(_ text: String) -> TimeInterval? {
        let units: [Character: TimeInterval] = ["d": 86400, "h": 3600, "m": 60, "s": 1]
        var digits = Substring(text)
        var unit: TimeInterval = 1
        if let last = text.last, let seconds = units[last] {
            unit = seconds
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), digits.count <= 7,
            let number = Double(digits)
        else { return nil }
        let seconds = number * unit
        return lifetimes.contains(seconds) ? seconds : nil
    }

    package struct Created: Sendable {
        package let id: String
        package let link: String
        package let expiresAt: Date
        package let mailed: Bool
    }

    /// Makes an invitation: its groups must exist (`AccountGroups.unknownSlugs`), its address be one mail can go to.
    /// With an address, the mail is written to the outbox in the invitation's transaction. The audit events name
    /// `actor` (the command line, or an admin through the admin API).
    package func create(
        email: String?, groups slugs: [String], lifetime: TimeInterval, at now: Date,
        by actor: AdminActor = .commandLine, language: String? = nil
    ) async throws -> Created {
        var seen = Set<String>()
        let slugs = slugs.filter { seen.insert($0).inserted }
        let unknown = try await groups.unknownSlugs(slugs)
        guard unknown.isEmpty else {
            throw AdminError(description: "no such group: \(unknown.joined(separator: ", ")) (see sesame groups list)")
        }
        var address: String?
        if let email {
            guard let valid = EmailAddresses.validate(email) else {
                throw AdminError(description: "--email: not an address mail can be sent to")
            }
            address = valid
        }
        guard Self.lifetimes.contains(lifetime) else {
            throw AdminError(description: "--expires: between 5 minutes and 90 days")
        }
        let (id, token, hash) = Invitations.newToken()
        let expiresAt = now.addingTimeInterval(lifetime)
        let record = InvitationRecord(
            id: id, secretHash: hash, email: address, groups: slugs, createdAt: now, expiresAt: expiresAt)
        var events = [
            actor.event(
                .invitationCreated, subject: nil,
                detail: slugs.isEmpty ? id : id + " groups=" + slugs.joined(separator: ","),
                at: now)
        ]
        if address != nil { events.append(actor.event(.invitationMailed, subject: nil, detail: id, at: now)) }
        let mail = address.map { mails.invitation(to: $0, token: token, expiresAt: expiresAt, tag: language) }
        try await store.createInvitation(record, mail: mail, mailKind: InvitationMails.kind, audit: events)
        return Created(id: id, link: mails.link(token: token), expiresAt: expiresAt, mailed: mail != nil)
    }

    /// One line per invitation: id, state, expiry, address, groups.
    package func list(at now: Date) async throws -> [String] {
        try await store.invitations().map { invitation in
            [
                invitation.id, invitation.state(at: now), "expires=" + InvitationMails.shown(invitation.expiresAt),
                "email=" + (invitation.email ?? "-"),
                "groups=" + (invitation.groups.isEmpty ? "-" : invitation.groups.joined(separator: ",")),
            ].joined(separator: " ")
        }
    }

    package func revoke(id: String, at now: Date, by actor: AdminActor = .commandLine) async throws {
        let event = actor.event(.invitationRevoked, subject: nil, detail: id, at: now)
        guard try await store.revokeInvitation(id: id, at: now, audit: event) else {
            throw AdminError(description: "no usable invitation \(id.prefix(32)) (see sesame invites list)")
        }
    }
}
