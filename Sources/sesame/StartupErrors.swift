import ArgumentParser
import SesameServer
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

/// Turns an error found while reading the settings or opening what they name into a message for the operator: the
/// setting it concerns, with every way to set it (flag, environment variable, config-file key) and where the
/// settings are documented, thrown as a usage error (exit status 2, which the systemd unit does not restart on).
/// Other errors pass through unchanged.
enum StartupErrors {
    static func explained(_ error: any Error) -> any Error {
        switch error {
        case let error as ConfigurationError:
            return ValidationError(explain(error.description))
        case let error as SealingKeyError:
            return ValidationError(
                explain("sealing-key-file: " + error.description)
                    + "\nCreate a key file with `sesame seal-keys generate > FILE` (then chmod 600 FILE), or fix the path."
            )
        case let error as DatabaseError where error.code == .exposedFiles:
            return ValidationError(error.description)
        case let error as StoreError where error.code == .newerSchema:
            return ValidationError(
                "database: a newer Sesame applied schema change \(error.extra["version"] ?? "?"), which removes or"
                    + " changes what this version (schema \(error.extra["knownThrough"] ?? "?")) uses. Upgrade this node to the version that serves the database"
                    + " (docs/deploy.md, \"Upgrades\")."
            )
        default:
            return error
        }
    }

    /// `message` starts with a setting's flag name without its dashes (`port: expected …`), as the settings table
    /// words its errors; the matching setting's ways of being set are appended.
    static func explain(_ message: String) -> String {
        let setting = ServerConfiguration.settings
            .filter { message.hasPrefix(String($0.flag.dropFirst(2)) + ":") }
            .max { $0.flag.count < $1.flag.count }
        guard let setting else { return message }
        return message
            + "\nSet it with \(setting.flag), the environment variable \(setting.environment) or \"\(setting.key)\" in the"
            + " config file (docs/configuration.md; `sesame serve --help` lists every setting)."
    }
}
