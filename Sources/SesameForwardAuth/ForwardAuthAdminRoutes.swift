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
        /// Why, in English (for a script's log); the console says it in the page's language from `reasonCode`.
        package let reason: String
        /// Why, as a word the console renders from its catalog (`console.forward-auth.why-<code>`, with `-passkey`
        /// added when a passkey sign-in is needed there), with `reasonParameters`.
        package let reasonCode: TestReason
        package let reasonParameters: ReasonParameters
    }

    /// Why a tested URL comes to its decision.
    package enum TestReason: String, Codable, Sendable, CaseIterable {
        /// An http address on a server that answers for https only.
        case httpsOnly = "https-only"
        /// The host is outside `forwardAuthDomains` (parameter `host`).
        case hostNotAllowed = "host-not-allowed"
        /// Rules exist and none matches, or the path cannot be read unambiguously.
        case noRuleMatches = "no-rule-matches"
        /// The rule that matches lets nobody in (parameter `rule`, from 1).
        case nobody
        /// The person is in none of the rule's groups (parameters `user`, `groups`).
        case notInGroups = "not-in-groups"
        /// Someone not signed in is sent to sign in first.
        case signIn = "sign-in"
        /// The person is in one of the rule's groups (parameter `user`).
        case inGroups = "in-groups"
        /// No rules are set: every signed-in person passes.
        case unruled
        /// The person passes once signed in (parameter `user`).
        case passes
        /// Refused for no other reason.
        case refused
    }

    /// What a reason names; each present only where its reason uses it.
    package struct ReasonParameters: Codable, Sendable, Equatable {
        package var host: String?
        /// The rule's number, from 1.
        package var rule: Int?
        package var user: String?
        package var groups: [String]?
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
            let httpsOnly = sesame.configuration.isSecureOrigin && target.scheme != "https"
            return TestBody(
                url: target.url, match: "not-served", rule: nil, passkeyRequired: false, user: user?.username,
                decision: "denied",
                reason: httpsOnly
                    ? "Sesame answers for https addresses only."
                    : "\(target.host) is not within forward-auth-domains; Sesame refuses it (host_not_allowed).",
                reasonCode: httpsOnly ? .httpsOnly : .hostNotAllowed,
                reasonParameters: ReasonParameters(host: httpsOnly ? nil : target.host))
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
        let who = user?.username ?? "This person"
        let code: TestReason
        var parameters = ReasonParameters(user: user?.username)
        let reason: String
        switch (decision, match) {
        case (.denied, .refused):
            code = .noRuleMatches
            reason = "Rules exist and none matches this address (or its path cannot be read unambiguously): refused."
        case (.denied, .rule(let found)) where found.policy == .nobody:
            code = .nobody
            parameters.rule = rule.map { $0.index + 1 }
            reason = "Rule \(rule.map { "\($0.index + 1)" } ?? "") lets nobody in here."
        case (.denied, .rule(let found)):
            code = .notInGroups
            parameters.groups = found.groups
            reason = "\(who) is in none of the groups the rule names (\(found.groups.joined(separator: ", ")))."
        case (.signIn, _):
            code = .signIn
            reason = "Someone not signed in is sent to sign in first\(passkey ? " with a passkey" : "")."
        case (.pass, .rule(let found)) where found.policy == .groups:
            code = .inGroups
            reason = "\(who) is in one of the rule's groups\(passkey ? "; a sign-in with a passkey is needed" : "")."
        case (.pass, .unruled):
            code = .unruled
            reason =
                "No rules are set: every signed-in person passes\(passkey ? " (with a passkey at this host)" : "")."
        case (.pass, _):
            code = .passes
            reason = passkey ? "\(who) passes when signed in with a passkey." : "\(who) passes once signed in."
        case (.denied, .unruled):
            code = .refused
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
            }(), reason: reason, reasonCode: code, reasonParameters: parameters)
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
