import SesameCore

extension ServerConfiguration {
    private enum AdminGroupKey: SettingKey { static let defaultValue = "admins" }
    private enum FirstSignUpAdminKey: SettingKey { static let defaultValue = false }

    /// Whether the first account made by sign-up on a server with no accounts joins `adminGroup` (created when
    /// missing), in the sign-up's own transaction (`FirstSignUpAdmin`). Off by default.
    public var firstSignUpAdmin: Bool {
        get { self[FirstSignUpAdminKey.self] }
        set { self[FirstSignUpAdminKey.self] = newValue }
    }

    /// The slug of the group whose members may use the admin API (`/api/admin/...`): `admins` unless set. Nobody is
    /// an admin until an operator creates the group and puts someone in it (`sesame groups add admins`,
    /// `sesame users groups add NAME admins`).
    public var adminGroup: String {
        get { self[AdminGroupKey.self] }
        set { self[AdminGroupKey.self] = newValue }
    }

    /// The groups feature's rows of the settings table.
    package static let groupsSettings: [Setting] = [
        Setting(
            key: "adminGroup", flag: "--admin-group", environment: "SESAME_ADMIN_GROUP",
            defaultValue: AdminGroupKey.defaultValue,
            help: "The group whose members may use the admin API (/api/admin); a group slug."
        ) { c, v throws(ConfigurationError) in
            if let problem = GroupSlugs.problem(v) { throw ConfigurationError("adminGroup: \(problem)") }
            c.adminGroup = v
        },
        Setting(
            key: "firstSignUpAdmin", flag: "--first-sign-up-admin", environment: "SESAME_FIRST_SIGN_UP_ADMIN",
            defaultValue: String(FirstSignUpAdminKey.defaultValue),
            help:
                "Whether the first account made by sign-up on a server with no accounts joins the administrators' group (adminGroup, created when missing)."
        ) { c, v throws(ConfigurationError) in
            c.firstSignUpAdmin = try bool("first-sign-up-admin", v)
        },
    ]
}
