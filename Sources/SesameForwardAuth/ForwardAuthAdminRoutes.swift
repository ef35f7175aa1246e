import Foundation
import Hummingbird
import SesameCore

/// The admin JSON API for forward auth (`/api/admin/forward-auth…`, scope `forward-auth`), in the OpenAPI document;
/// the console's Forward-auth page calls it. The rules are the `forwardAuthRules` setting (read-only here); a test
/// of a URL asks `ForwardAuthService` the questions `/forward-auth` asks (`accepts`, `rule`, `demandsPasskey`,
/// `decide`), so the answer is the one a proxied request would get. A test changes nothing and is not audited.
package struct ForwardAuthAdminRoutes: Sendable {
    package let sesame: ServerCore
    package let service: ForwardAuthService

    package init(sesame: ServerCore) {
        self.sesame = sesame
        self.service = ForwardAuthService(sesame)
    }

    package static let scope = AdminScope("forward-auth")

    package struct RuleBody: ResponseEncodable, Sendable {
        /// The rule's position in `forwardAuthRules`, from 0.
        package let index: Int
        package let host: String
        package let path: String
        package let policy: String
        package let groups: [String]
    }

    package struct RulesBody: ResponseEncodable, Sendable {
        package let domains: [String]
        package let passkeyDomains: [String]
        /// Empty: every signed-in person passes at every host within `domains`.
        package let rules: [RuleBody]
    }

    package struct Test: Decodable, Sendable {
        package let url: String
        /// A username: whether that person, signed in, would be let in; absent: someone not signed in.
        package let user: String?
    }

    package struct TestBody: ResponseEncodable, Sendable {
        package let url: String
        /// `rule` (a rule decides), `unruled` (no rules: any signed-in person), `refused` (rules exist and none
        /// matches, or the path cannot be normalised), `not-served` (the host is outside `forwardAuthDomains`).
        package let match: String
        package let rule: RuleBody?
        package let passkeyRequired: Bool
        package let user: String?
        /// `pass`, `sign-in` (sent to sign in first) or `denied`.
        package let decision: String
        package let reason: String
    }

    private func body(_ rule: ForwardAuthRules.Rule, index: Int) -> RuleBody {
        RuleBody(
            index: index, host: (rule.wildcard ? "*." : "") + rule.host,
            path: "/" + rule.segments.joined(separator: "/"), policy: rule.policy.rawValue, groups: rule.groups)
    }

    private static func refused(_ message: String) -> APIError {
        APIError(.badRequest, .invalidForwardAuthTest, message)
    }

    /// What a request at `url` by `username` (nil: not signed in) would come to at `/forward-auth`.
    package func test(url: String, username: String?) async throws -> TestBody {
        guard url.utf8.count <= ForwardTarget.maxPathLength + 300, let target = ForwardTarget(url: url) else {
            throw Self.refused(
                "Give an absolute http or https URL with a DNS name, like https://app.example.org/admin.")
        }
        var user: User?
        if let username {
            guard let found = try await sesame.store.user(usernameKey: Usernames.key(username)) else {
                throw Self.refused("There is no account \(username.prefix(64)).")
            }
            user = found
        }
        guard service.accepts(target) else {
            return TestBody(
                url: target.url, match: "not-served", rule: nil, passkeyRequired: false, user: user?.username,
                decision: "denied",
                reason: sesame.configuration.isSecureOrigin && target.scheme != "https"
                    ? "Sesame answers for https addresses only."
                    : "\(target.host) is not within forward-auth-domains; Sesame refuses it (host_not_allowed).")
        }
        let match = service.rule(target)
        let passkey = service.demandsPasskey(target)
        var rule: RuleBody?
        let matchName: String
        switch match {
        case .unruled: matchName = "unruled"
        case .refused: matchName = "refused"
        case .rule(let found):
            matchName = "rule"
            rule = service.rules.rules.firstIndex(of: found).map { body(found, index: $0) }
        }
        let decision = try await service.decide(match, userID: user?.id)
        let reason: String
        switch (decision, match) {
        case (.denied, .refused):
            reason = "Rules exist and none matches this address (or its path cannot be read unambiguously): refused."
        case (.denied, .rule(let found)) where found.policy == .nobody:
            reason = "Rule \(rule.map { "\($0.index + 1)" } ?? "") lets nobody in here."
        case (.denied, .rule(let found)):
            reason =
                "\(user?.username ?? "This person") is in none of the groups the rule names (\(found.groups.joined(separator: ", ")))."
        case (.signIn, _):
            reason = "Someone not signed in is sent to sign in first\(passkey ? " with a passkey" : "")."
        case (.pass, .rule(let found)) where found.policy == .groups:
            reason =
                "\(user?.username ?? "This person") is in one of the rule's groups\(passkey ? "; a sign-in with a passkey is needed" : "")."
        case (.pass, .unruled):
            reason =
                "No rules are set: every signed-in person passes\(passkey ? " (with a passkey at this host)" : "")."
        case (.pass, _):
            reason =
                passkey
                ? "\(user?.username ?? "This person") passes when signed in with a passkey."
                : "\(user?.username ?? "This person") passes once signed in."
        case (.denied, .unruled):
            reason = "Refused."
        }
        return TestBody(
            url: target.url, match: matchName, rule: rule, passkeyRequired: passkey, user: user?.username,
            decision: {
                switch decision {
                case .pass: "pass"
                case .signIn: "sign-in"
                case .denied: "denied"
                }
            }(), reason: reason)
    }

    /// Registers the routes on the admin API's group (`/api/admin`, behind `AdminMiddleware`).
    package func register(admin group: RouterGroup<AdminRequestContext>) {
        let routes = group.group("forward-auth")
        routes.get("rules") { _, context in
            try context.admin.require(Self.scope)
            return RulesBody(
                domains: sesame.configuration.forwardAuthDomains,
                passkeyDomains: sesame.configuration.forwardAuthPasskeyDomains,
                rules: service.rules.rules.enumerated().map { body($1, index: $0) })
        }
        routes.post("test") { request, context in
            try context.admin.require(Self.scope)
            let asked = try await request.decode(as: Test.self, context: context)
            let user = asked.user?.trimmingCharacters(in: .whitespaces)
            return try await test(url: asked.url, username: user?.isEmpty == true ? nil : user)
        }
    }
}
