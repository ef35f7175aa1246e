import SesameCore

extension SecondStepChoice {
    /// A code from an authenticator app (`Factor.totp`).
    package static let totp = SecondStepChoice(
        factor: .totp, owner: "SesameSecondFactors", labelKey: "web.signin.factor-totp",
        codeLabelKey: "web.signin.code-label-totp", codeHintKey: "web.signin.code-hint-totp", input: .oneTimeCode)
    /// A code sent by text message (`Factor.sms`): sent on request, through `/api/sessions/second-factor/sms`.
    package static let sms = SecondStepChoice(
        factor: .sms, owner: "SesameSecondFactors", labelKey: "web.signin.factor-sms",
        codeLabelKey: "web.signin.code-label-sms", codeHintKey: "web.signin.code-hint-sms", input: .oneTimeCode,
        sender: .init(
            path: SecondFactorRoutes.smsSendPath, buttonKey: "web.signin.send-sms", sentKey: "web.signin.sms-sent"))
    /// One of the account's recovery codes (`Factor.recovery`).
    package static let recovery = SecondStepChoice(
        factor: .recovery, owner: "SesameSecondFactors", labelKey: "web.signin.factor-recovery",
        codeLabelKey: "web.signin.code-label-recovery", codeHintKey: "web.signin.code-hint-recovery", input: .text)

    /// The sign-in page's choices for the factors this target checks (`Factor.secondFactors`).
    package static let secondFactors: [SecondStepChoice] = [.totp, .sms, .recovery]
}
