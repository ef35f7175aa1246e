import Foundation
import Logging
import WebAuthn
import SesameCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a logout token to a client's `backchannel_logout_uri` (OpenID Connect Back-Channel Logout 1.0 §2.5: an
/// HTTP POST with the form parameter `logout_token`). Tests capture tokens here instead of sending them.
public protocol LogoutDelivery: Sendable {
    func deliver(logoutToken: String, to uri: String) async throws
}

/// The delivery `sesame serve` uses: a POST with a 5 s timeout, without following redirects' methods blindly
/// (URLSession's default). A non-2xx answer is an error the caller logs.
public struct HTTPLogoutDelivery: LogoutDelivery {
    public init() {}

    public func deliver(logoutToken: String, to uri: String) async throws {
        guard let url = URL(string: uri) else { throw IdentityProviderError.logoutDeliveryRefused(status: 0) }
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(FormParameters.encode([("logout_token", logoutToken)]).utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw IdentityProviderError.logoutDeliveryRefused(status: status) }
    }
}

/// The claims of a logout token (OpenID Connect Back-Channel Logout 1.0 §2.4): who was signed out (`sub`), by
/// whom (`iss`), for which client (`aud`), and the event that says so; never a `nonce`, so it cannot pass for an
/// ID token.
package struct LogoutTokenClaims: TokenClaims {
    package static let event = "http://schemas.openid.net/event/backchannel-logout"
    package struct Empty: Codable, Sendable {}

    package let iss: String
    package let sub: String
    package let aud: String
    package let iat: Int
    package let exp: Int
    package let jti: String
    package let events: [String: Empty]
}

/// Tells the clients that registered a back-channel logout URI that a person's sessions ended: after "sign out
/// everywhere", an RP-initiated logout, an operator disabling the account, or the person removing an app's access.
/// Sending happens after the request has answered (a slow client never holds up the person) and failures are
/// logged with the client id only.
package struct BackChannelLogout: Sendable {
    package let keyring: SigningKeyring
    package let issuer: String
    package let store: any IdentityProviderStorage
    package let clock: ServerClock
    package let subjects: SubjectIdentifiers
    package let delivery: any LogoutDelivery
    package let logger: Logger

    package init(
        keyring: SigningKeyring, issuer: String, store: any IdentityProviderStorage, clock: ServerClock,
        subjects: SubjectIdentifiers,
        delivery: any LogoutDelivery, logger: Logger
    ) {
        self.keyring = keyring
        self.issuer = issuer
        self.store = store
        self.clock = clock
        self.subjects = subjects
        self.delivery = delivery
        self.logger = logger
    }

    package static let lifetime = 120

    /// Every client with a live grant or a consent of this person's that registered a logout URI.
    package func clients(of userID: String) async throws -> [OAuthClient] {
        var ids = Set(try await store.grants(userID: userID, now: clock.now()).map(\.clientID))
        ids.formUnion(try await store.consents(userID: userID).map(\.clientID))
        var clients: [OAuthClient] = []
        for id in ids.sorted() {
            if let client = try await store.client(id: id), client.backchannelLogoutURI != nil {
                clients.append(client)
            }
        }
        return clients
    }

    /// Sends to every client of `userID` that registered for it; returns at once.
    package func sendToAll(userID: String) {
        let service = self
        Task {
            do {
                await service.deliver(to: try await service.clients(of: userID), userID: userID)
            } catch {
                service.logger.warning(
                    "back-channel logout not sent", metadata: ["error": .string(String(describing: type(of: error)))])
            }
        }
    }

    /// Sends to the given clients (those without a logout URI are skipped); returns at once.
    package func send(to clients: [OAuthClient], userID: String) {
        let service = self
        Task { await service.deliver(to: clients, userID: userID) }
    }

    /// Sends and waits (for the detached calls above and for tests).
    package func deliver(to clients: [OAuthClient], userID: String) async {
        for client in clients {
            guard let uri = client.backchannelLogoutURI else { continue }
            do {
                try await delivery.deliver(logoutToken: try await token(for: client, userID: userID), to: uri)
            } catch {
                logger.warning(
                    "back-channel logout failed",
                    metadata: ["client": .string(client.id), "error": .string(String(describing: type(of: error)))])
            }
        }
    }

    package func token(for client: OAuthClient, userID: String) async throws -> String {
        let iat = Int(clock.now().timeIntervalSince1970)
        let claims = LogoutTokenClaims(
            iss: issuer, sub: subjects.subject(userID: userID, client: client), aud: client.id, iat: iat,
            exp: iat + Self.lifetime,
            jti: Base64URL.encode(Secrets.random(16)), events: [LogoutTokenClaims.event: .init()])
        let algorithm = IDTokenAlgorithm(rawValue: client.idTokenAlgorithm) ?? .es256
        return try await keyring.sign(claims, algorithm, type: "logout+jwt")
    }
}
