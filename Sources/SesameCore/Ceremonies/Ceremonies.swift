import Foundation
import HTTPTypes
import Hummingbird
import WebAuthn

/// Every challenge the server hands out, in one shape: a row keyed by SHA-256 of the challenge (or of the token
/// that stands for it), with a ``ChallengePurpose``, a binding to whoever asked, the account it concerns, a JSON
/// payload and an expiry (`challengeTimeout`).
///
/// `begin` stores one (counted against the client address's ceremony budget when the client asked for it); `finish`
/// consumes it atomically (`DELETE … RETURNING`), so a ceremony started on one node finishes on any other, exactly
/// once, before it expires. Unknown, expired, used and foreign challenges are all `400 challenge_invalid`.
///
/// Bindings: sign-up and sign-in challenges are bound to a ceremony token (HttpOnly cookie `sesame_ceremony`, or the
/// `Sesame-Ceremony` header for native apps), add-passkey and re-authentication challenges to the session, the
/// others to nothing (their id is itself a secret: the pending token's hash, or a code's MAC).
package struct Ceremonies: Sendable {
    package let store: any Store
    package let rateLimiter: RateLimiter
    package let clock: ServerClock
    package let cookies: Cookies
    /// Seconds a challenge lives.
    package let lifetime: Int

    package init(store: any Store, rateLimiter: RateLimiter, clock: ServerClock, cookies: Cookies, lifetime: Int) {
        self.store = store
        self.rateLimiter = rateLimiter
        self.clock = clock
        self.cookies = cookies
        self.lifetime = lifetime
    }

    package static let tokenHeader = HTTPField.Name("Sesame-Ceremony")!

    /// Stores a new challenge and returns when it expires. With `countedFor`, the start is counted against that
    /// client address's ceremony budget and nothing is stored past it (429); with `replacing`, a challenge with
    /// the same id is removed first (a code sent again); `lifetime` shortens the configured one for codes that
    /// only cross a redirect.
    @discardableResult
    package func begin(
        _ purpose: ChallengePurpose, id: [UInt8], binding: [UInt8] = [], userID: String?, payload: some Encodable,
        countedFor address: String? = nil, replacing: Bool = false, lifetime: TimeInterval? = nil
    ) async throws -> Date {
        let expires = clock.now().addingTimeInterval(lifetime ?? TimeInterval(self.lifetime))
        let record = ChallengeRecord(
            purpose: purpose.rawValue, userID: userID,
            payload: String(decoding: try JSONEncoder().encode(payload), as: UTF8.self),
            expiresAt: expires
        )
        if replacing { try await store.deleteChallenge(id: id) }
        if let address {
            try await rateLimiter.startCeremony(address: address, challengeID: id, binding: binding, record)
        } else {
            try await store.insertChallenge(id: id, binding: binding, record)
        }
        return expires
    }

    /// Consumes the challenge with this id, purpose and binding; `challenge_invalid` when there is none.
    package func finish(_ purpose: ChallengePurpose, id: [UInt8], binding: [UInt8] = []) async throws -> ChallengeRecord
    {
        guard
            let record = try await store.consumeChallenge(
                id: id, purpose: purpose.rawValue, binding: binding, now: clock.now())
        else {
            throw APIError.challengeInvalid
        }
        return record
    }

    /// Removes the challenge with this id whatever its purpose or binding (a one-time code shown to the wrong
    /// browser is burnt, so whoever else learns it cannot use it either).
    package func discard(id: [UInt8]) async throws {
        try await store.deleteChallenge(id: id)
    }

    /// Reads the challenge without consuming it; nil when there is none.
    package func peek(_ purpose: ChallengePurpose, id: [UInt8], binding: [UInt8] = []) async throws -> ChallengeRecord?
    {
        try await store.peekChallenge(id: id, purpose: purpose.rawValue, binding: binding, now: clock.now())
    }

    /// The payload stored with `record`; `challenge_invalid` if it is not of this shape.
    package func payload<Payload: Decodable>(_ record: ChallengeRecord, as type: Payload.Type) throws -> Payload {
        guard let payload = try? JSONDecoder().decode(Payload.self, from: Data(record.payload.utf8)) else {
            throw APIError.challengeInvalid
        }
        return payload
    }

    // MARK: WebAuthn ceremonies

    /// Starts a WebAuthn ceremony whose options carry `challenge`.
    package func begin(
        _ purpose: ChallengePurpose, challenge: [UInt8], binding: [UInt8], userID: String?, payload: some Encodable,
        countedFor address: String
    ) async throws {
        try await begin(
            purpose, id: Secrets.sha256(challenge), binding: binding, userID: userID, payload: payload,
            countedFor: address)
    }

    /// Finds the challenge a WebAuthn response's client data names and consumes it.
    package func finish(_ purpose: ChallengePurpose, clientDataJSON: [UInt8], binding: [UInt8]) async throws -> (
        challenge: [UInt8], record: ChallengeRecord
    ) {
        let challenge = try Self.challenge(clientDataJSON: clientDataJSON)
        return (challenge, try await finish(purpose, id: Secrets.sha256(challenge), binding: binding))
    }

    /// The challenge a WebAuthn response's client data names (16 to 64 bytes); `invalid_client_data` otherwise.
    package static func challenge(clientDataJSON: [UInt8]) throws -> [UInt8] {
        guard let clientData = try? CollectedClientData(bytes: clientDataJSON),
            let challenge = try? Base64URL.decode(clientData.challenge), (16...64).contains(challenge.count)
        else { throw APIError.invalidClientData }
        return challenge
    }

    /// The client's ceremony token (header or cookie) if it sent a well-formed one, else a new one; and its hash,
    /// which binds sign-up and sign-in challenges.
    package func ceremonyToken(_ request: Request) -> (token: String, binding: [UInt8]) {
        let sent = request.headers[Self.tokenHeader] ?? request.cookies[cookies.name(.ceremony)]?.value
        if let sent, SessionIssuer.isWellFormed(sent) { return (sent, Secrets.sha256(sent)) }
        let (token, hash) = Secrets.token()
        return (token, hash)
    }

    /// What binds a challenge to a session.
    package static func sessionBinding(_ authentication: Authentication) -> [UInt8] {
        Secrets.sha256(Array("session:".utf8) + authentication.tokenHash)
    }

    /// Options JSON as the page passes it to `PublicKeyCredential.parse…OptionsFromJSON`, with the ceremony token as
    /// a header (for apps) and a cookie (for pages) when the ceremony is bound to one.
    package func options<Options: Encodable & Sendable>(_ options: Options, ceremonyToken: String?) -> EditedResponse<
        JSONBody<Options>
    > {
        var headers: HTTPFields = [:]
        if let ceremonyToken {
            headers[Self.tokenHeader] = ceremonyToken
            headers[.setCookie] = cookies.set(.ceremony, ceremonyToken)
        }
        return EditedResponse(headers: headers, response: JSONBody(options))
    }
}
