import SesameCore
import SesameSecondFactors

extension SecondStepChoice {
    /// Every feature's choices for the sign-in page's second step, in the order the vocabulary lists the factors; a
    /// declared factor with no choice or two, or a choice for an undeclared factor, stops the process here.
    /// `WebRoutes` renders them into `/signin`.
    package static let server: [SecondStepChoice] = joined(
        SecondStepChoice.secondFactors, factors: Vocabulary.server.factors)
}
