/// How the sign-in page's second step offers one factor, as the feature that checks the factor gives it: its choice
/// (a radio button with its label), the words around the one code field while it is chosen, what the field takes,
/// and, for a factor whose code is sent on request (SMS), the button that sends it.
///
/// A feature lists its choices beside its factors (`SecondStepChoice.secondFactors` in `SesameSecondFactors`); the
/// composition root joins them in the order the vocabulary lists the factors (`SecondStepChoice.server`; a factor
/// with no choice, two, or a choice for a factor no feature declares stops the process there) and hands them to
/// `SesameWeb`, which renders them into `signin.html` where it says `{{secondStepChoices}}` and
/// `{{secondStepSenders}}`. `signin.js` knows no factor by name: it shows the choices of the factors the password
/// step answered and reads the words and the sender's route from the rendered page.
package struct SecondStepChoice: Sendable {
    /// What the code field takes while the factor is chosen.
    package enum CodeInput: String, Sendable {
        /// Digits from an app or a message: a numeric keyboard and the browser's one-time-code AutoFill.
        case oneTimeCode
        /// Letters and digits the person keeps (recovery codes): a text keyboard, nothing filled in.
        case text

        /// The field's `inputmode`.
        package var inputMode: String { self == .oneTimeCode ? "numeric" : "text" }
        /// The field's `autocomplete`.
        package var autocomplete: String { self == .oneTimeCode ? "one-time-code" : "off" }
    }

    /// A button that asks the server to send the factor's code (`POST` to `path` with the pending token).
    package struct Sender: Sendable {
        /// The route that sends a code for the pending sign-in; the owner registers it.
        package let path: String
        /// The catalog key of the button's words.
        package let buttonKey: String
        /// The catalog key of what the page says once the code is on its way.
        package let sentKey: String

        package init(path: String, buttonKey: String, sentKey: String) {
            self.path = path
            self.buttonKey = buttonKey
            self.sentKey = sentKey
        }
    }

    /// The factor offered; its name is the choice's value and the element ids' middle (`factor-<name>`).
    package let factor: Factor
    /// Who gives it (a target's name), for the message that names a duplicate.
    package let owner: String
    /// The catalog key of the choice's label.
    package let labelKey: String
    /// The catalog keys of the code field's label and hint while the factor is chosen.
    package let codeLabelKey: String
    package let codeHintKey: String
    package let input: CodeInput
    package let sender: Sender?

    package init(
        factor: Factor, owner: String, labelKey: String, codeLabelKey: String, codeHintKey: String,
        input: CodeInput, sender: Sender? = nil
    ) {
        self.factor = factor
        self.owner = owner
        self.labelKey = labelKey
        self.codeLabelKey = codeLabelKey
        self.codeHintKey = codeHintKey
        self.input = input
        self.sender = sender
    }

    /// What is wrong with `choices` against the factors the features declare, in `factors`' order: a factor no
    /// choice offers, a factor two choices offer, a choice for a factor no feature declares, and a factor name that
    /// cannot stand in an element id. Empty when each declared factor has exactly one choice.
    package static func problems(in choices: [SecondStepChoice], factors: [Factor]) -> [String] {
        var problems: [String] = []
        for factor in factors {
            let owners = choices.filter { $0.factor == factor }.map(\.owner)
            if owners.isEmpty { problems.append("factor \(factor.rawValue): no second-step choice") }
            if owners.count > 1 {
                problems.append("second-step choice \(factor.rawValue): \(owners.joined(separator: ", "))")
            }
        }
        for choice in choices where !factors.contains(choice.factor) {
            problems.append("second-step choice \(choice.factor.rawValue): no feature declares the factor")
        }
        for choice in choices
        where choice.factor.rawValue.isEmpty
            || !choice.factor.rawValue.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        {
            problems.append("second-step choice \(choice.factor.rawValue): a factor name of a-z and 0-9 only")
        }
        return problems
    }

    /// The choices in the order of `factors` (the order pages offer them); any of `problems` is a programming error
    /// and stops the process.
    package static func joined(_ choices: [SecondStepChoice], factors: [Factor]) -> [SecondStepChoice] {
        let problems = problems(in: choices, factors: factors)
        precondition(problems.isEmpty, "second-step choices: \(problems.joined(separator: "; "))")
        return factors.compactMap { factor in choices.first { $0.factor == factor } }
    }
}
