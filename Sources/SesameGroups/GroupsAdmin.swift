import Foundation
import SesameCore
import WebAuthn

/// `sesame groups …` and `sesame users groups …`: the operator's side of groups, as lines to print. Each change is
/// an audit event with client address `cli`; a refusal is an `AdminError` whose message says what to give instead.
package struct GroupsAdmin: Sendable {
    package let service: GroupsService

    package init(store: any GroupsStore & AccountStore, adminGroup: String) {
        self.service = GroupsService(store: store, adminGroup: adminGroup)
    }

    private static let dateFormat = Date.ISO8601FormatStyle()

    /// Runs `body`, an `APIError` of the rules becoming the command's refusal.
    private func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as APIError { throw AdminError(description: error.message) }
    }

    @discardableResult
    package func add(_ slug: String, name: String?, claims: String?) async throws -> String {
        try await refusing {
            let group = try await service.add(slug: slug, name: name, claims: claims, by: .commandLine)
            return "group \(group.slug) (\(group.name)) added"
        }
    }

    package func list() async throws -> [String] {
        var lines: [String] = []
        for group in try await service.store.groups() {
            let members = try await service.store.groupMembers(slug: group.slug)?.count ?? 0
            lines.append("\(group.slug)  \(group.name)  members=\(members)")
        }
        return lines
    }

    package func show(_ slug: String) async throws -> String {
        try await refusing {
            let group = try await service.group(slug)
            var lines = [
                "slug:    \(group.slug)", "name:    \(group.name)",
                "claims:  \(group.claims.rendered())",
                "created: \(group.createdAt.formatted(Self.dateFormat))",
                "updated: \(group.updatedAt.formatted(Self.dateFormat))", "members:",
            ]
            for member in try await service.members(slug: group.slug) {
                lines.append(
                    "  \(member.username)  \(member.userID)  since \(member.addedAt.formatted(Self.dateFormat))")
            }
            return lines.joined(separator: "\n")
        }
    }

    @discardableResult
    package func update(_ slug: String, name: String?, claims: String?) async throws -> String {
        guard name != nil || claims != nil else { throw AdminError(description: "give --name or --claims") }
        return try await refusing {
            let group = try await service.update(slug: slug, name: name, claims: claims, by: .commandLine)
            return "group \(group.slug) is now \(group.name), claims \(group.claims.rendered())"
        }
    }

    @discardableResult
    package func remove(_ slug: String) async throws -> String {
        try await refusing {
            try await service.remove(slug: slug, by: .commandLine)
            return "group \(slug) and its memberships removed"
        }
    }

    @discardableResult
    package func addMember(_ user: String, to slug: String) async throws -> String {
        try await refusing {
            let user = try await service.addMember(user, to: slug, by: .commandLine)
            return "\(user.username) added to \(slug)"
        }
    }

    @discardableResult
    package func removeMember(_ user: String, from slug: String) async throws -> String {
        try await refusing {
            let user = try await service.removeMember(user, from: slug, by: .commandLine)
            return "\(user.username) removed from \(slug); their refreshes for apps that allow only \(slug) now fail"
        }
    }
}
