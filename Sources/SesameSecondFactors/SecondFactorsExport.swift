import SesameCore

/// The second factors' part of an account's data export (`AccountExport`: "Download my data" and `sesame users
/// export`): whether an authenticator app is set up, the phone, how many recovery codes remain. Never a TOTP secret
/// or a recovery code's hash. Its fields sit at the top level of the export document, beside the other features'.
///
/// ```
/// "authenticatorApp": { "confirmed": bool } | null,
/// "phone": { "number": string, "confirmed": bool } | null,
/// "recoveryCodes": { "remaining": int }
/// ```
package struct SecondFactorsExport: Codable, Sendable {
    package struct AuthenticatorApp: Codable, Sendable { package let confirmed: Bool }
    package struct Phone: Codable, Sendable {
        package let number: String
        package let confirmed: Bool
    }
    package struct RecoveryCodes: Codable, Sendable { package let remaining: Int }

    package let authenticatorApp: AuthenticatorApp?
    package let phone: Phone?
    package let recoveryCodes: RecoveryCodes

    /// The part for `userID`; the phone number in full only when `fullPhoneNumber` (the operator's export), else with
    /// only its last two digits, so a stolen web session does not learn a number to take over.
    package static func build(userID: String, store: any SecondFactorStore, fullPhoneNumber: Bool) async throws
        -> SecondFactorsExport
    {
        let phone = try await store.sms(userID: userID)
        return SecondFactorsExport(
            authenticatorApp: try await store.totp(userID: userID).map { AuthenticatorApp(confirmed: $0.confirmed) },
            phone: phone.map {
                Phone(number: fullPhoneNumber ? $0.phone : lastDigits($0.phone), confirmed: $0.confirmed)
            },
            recoveryCodes: RecoveryCodes(remaining: try await store.unusedRecoveryCodeCount(userID: userID)))
    }

    /// `+15555550123` → `•••••••••23`: the last two digits, every other character hidden.
    package static func lastDigits(_ phone: String) -> String {
        String(repeating: "•", count: max(0, phone.count - 2)) + phone.suffix(2)
    }
}
