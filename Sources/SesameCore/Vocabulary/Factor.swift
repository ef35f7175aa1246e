/// A second factor for password sign-in and re-authentication. An opaque word, as `AuditKind` is: the feature that
/// checks a factor declares it (an `extension Factor` in its vocabulary file) with the two rules that go with it, and
/// lists it in its `Vocabulary` part (`factors`, in the order pages offer them), so adding a factor is a change to
/// that feature alone. Two factors are equal when their stored names are.
public struct Factor: Hashable, Sendable, CustomStringConvertible, Encodable {
    /// The stored and wire name (`totp`; sessions' `method` is `password+totp`).
    public let rawValue: String
    /// Whether an account that has this factor must give it (or a stand-in such as a recovery code) after its
    /// password. Recovery codes only stand in for such a factor, so theirs is false.
    package let makesASecondStep: Bool
    /// The RFC 8176 method the identity provider's `amr` names for a password sign-in finished with it, beside `pwd`
    /// and `mfa` (`otp` for codes from an app or a recovery code, `sms` for a code sent to a phone).
    package let amr: String

    package init(_ rawValue: String, makesASecondStep: Bool, amr: String) {
        self.rawValue = rawValue
        self.makesASecondStep = makesASecondStep
        self.amr = amr
    }

    public var description: String { rawValue }

    public static func == (a: Factor, b: Factor) -> Bool { a.rawValue == b.rawValue }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Whether an account with these factors needs a second step after its password: the one rule password sign-in
    /// and re-authentication share.
    package static func secondStepNeeded(_ available: some Sequence<Factor>) -> Bool {
        available.contains { $0.makesASecondStep }
    }

    /// The declared factor named `name`, if one of `declared` is.
    package static func named(_ name: String, in declared: [Factor]) -> Factor? {
        declared.first { $0.rawValue == name }
    }
}

/// How a session's holder last proved who they are (`method` of the sessions API). The identity provider's `amr`
/// and `acr` claims are derived from it, so it says truthfully how many factors were used.
public enum SessionMethod: Sendable, Hashable, Encodable {
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
    /// A single-use recovery link an administrator made (`sesame users recovery-link`, the console): a limited
    /// session (`SessionLimitation.emailRecovery`) that may only add a passkey; no factor of the person's own.
    case recoveryLink

    /// Every method a server whose features declare `factors` can record.
    package static func all(factors: [Factor]) -> [SessionMethod] {
        [.passkey, .passkeyPresence, .password] + factors.map(Self.passwordAnd) + [.emailCode, .recoveryLink]
    }

    /// The method a session's `method` column names, given the factors the server's features declare; nil for a
    /// name no declared factor makes.
    package init?(rawValue: String, factors: [Factor]) {
        switch rawValue {
        case "passkey": self = .passkey
        case "passkey-up": self = .passkeyPresence
        case "password": self = .password
        case "email-code": self = .emailCode
        case "recovery-link": self = .recoveryLink
        default:
            guard rawValue.hasPrefix("password+"),
                let factor = Factor.named(String(rawValue.dropFirst("password+".count)), in: factors)
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
        case .recoveryLink: "recovery-link"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The method of a passkey ceremony whose UV flag was `userVerified`.
    package static func passkey(userVerified: Bool) -> SessionMethod { userVerified ? .passkey : .passkeyPresence }

    /// Whether two independent factors were used.
    public var isMultiFactor: Bool {
        switch self {
        case .passkey, .passwordAnd: true
        case .passkeyPresence, .password, .emailCode, .recoveryLink: false
        }
    }
}
