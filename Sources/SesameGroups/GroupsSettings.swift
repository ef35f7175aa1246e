import SesameCore

extension ServerConfiguration {
    private enum AdminGroupKey: SettingKey { static let defaultValue = "admins" }

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
        }
    ]
}
