/// A second factor for password sign-in and re-authentication.
public enum Factor: String, CaseIterable, Sendable, Codable {
    case totp
    case sms
    case recovery

    /// The order pages offer them in.
    package static let offered: [Factor] = [.totp, .sms, .recovery]

    /// Whether an account that has this factor must give it (or a recovery code) after its password. Recovery codes
    /// only stand in for such a factor. A switch with no default, so a new factor cannot be added without deciding.
    package var makesASecondStep: Bool {
        switch self {
        case .totp, .sms: true
        case .recovery: false
        }
    }

    /// Whether an account with these factors needs a second step after its password: the one rule password sign-in
    /// and re-authentication share.
    package static func secondStepNeeded(_ available: some Sequence<Factor>) -> Bool {
        available.contains { $0.makesASecondStep }
    }
}

/// How a session's holder last proved who they are (`method` of the sessions API). The identity provider's `amr`
/// and `acr` claims are derived from it, so it says truthfully how many factors were used.
public enum SessionMethod: Sendable, Hashable, RawRepresentable, CaseIterable, Codable {
    /// A passkey with user verification: the device and a PIN or biometric (two factors).
    case passkey
    /// A passkey that only tested presence (a security key without a PIN): one factor.
    case passkeyPresence
    /// A password alone (the account has no second factor).
    case password
    /// A password and a second factor.
    case passwordAnd(Factor)
    /// A code mailed to the account's verified address (recovery by email): a limited session
    /// (`SessionLimitation.emailRecovery`), one factor that no one calls phishing-resistant.
    case emailCode

    public static var allCases: [SessionMethod] {
        [.passkey, .passkeyPresence, .password] + Factor.allCases.map(Self.passwordAnd) + [.emailCode]
    }

    public init?(rawValue: String) {
        switch rawValue {
        case "passkey": self = .passkey
        case "passkey-up": self = .passkeyPresence
        case "password": self = .password
        case "email-code": self = .emailCode
        default:
            guard rawValue.hasPrefix("password+"),
                let factor = Factor(rawValue: String(rawValue.dropFirst("password+".count)))
            else {
                return nil
            }
            self = .passwordAnd(factor)
        }
    }

    public var rawValue: String {
        switch self {
        case .passkey: "passkey"
        case .passkeyPresence: "passkey-up"
        case .password: "password"
        case .passwordAnd(let factor): "password+\(factor.rawValue)"
        case .emailCode: "email-code"
        }
    }

    /// The method of a passkey ceremony whose UV flag was `userVerified`.
    package static func passkey(userVerified: Bool) -> SessionMethod { userVerified ? .passkey : .passkeyPresence }

    /// Whether two independent factors were used.
    public var isMultiFactor: Bool {
        switch self {
        case .passkey, .passwordAnd: true
        case .passkeyPresence, .password, .emailCode: false
        }
    }
}
