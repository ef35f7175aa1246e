/// What a stored challenge row is for. Only `Ceremonies` creates, reads and consumes challenge rows, and only with
/// a purpose; a row is found only by the purpose it was stored with. Each feature declares its purposes (an
/// `extension ChallengePurpose` beside its routes) and lists them in its `Vocabulary` part, so two features can never
/// share one (`Vocabulary.joined` refuses a purpose declared twice).
package struct ChallengePurpose: RawRepresentable, Hashable, Sendable {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }
}

/// What an attempt guesses at; each has its own per-account rate-limit bucket (`RateLimiter`). Each feature declares
/// the secrets it checks and lists them in its `Vocabulary` part; a second factor's bucket is named after the factor.
package struct GuessableSecret: RawRepresentable, Hashable, Sendable {
    package let rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(_ rawValue: String) { self.rawValue = rawValue }

    /// The bucket of a factor's codes.
    package init(_ factor: Factor) { self.rawValue = factor.rawValue }
}
