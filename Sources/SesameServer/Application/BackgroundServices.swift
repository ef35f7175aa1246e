import Foundation
import ServiceLifecycle
import SesameCore
import SesameWeb
import SesameMetadata
import SesameSecondFactors
import SesameIdentityProvider
import SesamePasswords
import SesamePasskeys
import SesameAccount
import SesameReauthentication
import SesameKeychainSync
import SesameForwardAuth
import SesameOperations

/// Deletes expired challenges, sessions and rate-limit windows once a minute, counted on `ticks` (the continuous
/// clock when serving; tests advance a clock of their own instead of waiting a minute).
package struct PurgeService: Service {
    package static let interval = Duration.seconds(60)
    package let sesame: ServerCore
    package let ticks: any Clock<Duration>

    package init(sesame: ServerCore, ticks: any Clock<Duration> = ContinuousClock()) {
        self.sesame = sesame
        self.ticks = ticks
    }

    package func run() async throws {
        // Sleeping is cancelled by graceful shutdown, so the service never delays it.
        try? await cancelWhenGracefulShutdown {
            while true {
                try await ticks.sleep(for: Self.interval)
                do {
                    try await sesame.store.purgeExpired(
                        now: sesame.now, rateLimitWindow: sesame.rateLimiter.policy.window)
                } catch {
                    sesame.logger.warning(
                        "purging expired rows failed",
                        metadata: ["error_type": .string(String(describing: type(of: error)))])
                }
            }
        }
    }
}
