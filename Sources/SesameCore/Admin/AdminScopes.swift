/// The admin API's scopes, in one list: each feature's part of the admin API names its scope from here
/// (`GroupsRoutes.scope` is `.groups`), and an admin API token may be made only with these
/// (`sesame admin-tokens create --scope`). `AdminTokensTests` ties every feature's scope to this list.
extension AdminScope {
    /// Accounts: search, show, disable, sign out (the console's people page).
    package static let people = AdminScope("people")
    /// Groups and memberships (`SesameGroups`).
    package static let groups = AdminScope("groups")
    /// The console's overview: nodes, recovery links, the first administrator.
    package static let overview = AdminScope("overview")
    /// The identity provider's clients (apps).
    package static let apps = AdminScope("apps")
    /// The identity provider's signing keys.
    package static let keys = AdminScope("keys")
    /// The FIDO metadata in force.
    package static let metadata = AdminScope("metadata")
    /// The server's settings as running.
    package static let settings = AdminScope("settings")
    /// Sign-up invitations.
    package static let invitations = AdminScope("invitations")
    /// The audit log (`GET /api/admin/audit`, its CSV export).
    package static let audit = AdminScope("audit")
    /// Reverse-proxy sign-in's access rules.
    package static let forwardAuth = AdminScope("forward-auth")
    /// Admin API tokens themselves (list and revoke; making one needs a person at the console).
    package static let tokens = AdminScope("tokens")

    /// Every scope the admin API knows, in the order help and docs list them.
    package static let all: [AdminScope] = [
        .people, .groups, .overview, .apps, .keys, .metadata, .settings, .invitations, .audit, .forwardAuth, .tokens,
    ]
}
