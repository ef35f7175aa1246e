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

/// Deletes expired challenges, sessions and rate-limit windows once a minute.
package struct PurgeService: Service {
    package let sesame: ServerCore

    package func run() async throws {
        // Sleeping is cancelled by graceful shutdown, so the service never delays it.
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: .seconds(60))
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
