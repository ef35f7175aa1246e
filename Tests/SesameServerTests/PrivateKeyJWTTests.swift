import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import WebAuthn

@testable import SesameCore
@testable import SesameIdentityProvider

/// `private_key_jwt` client authentication (OpenID Connect Core §9, RFC 7523) over HTTP on both engines: a client
/// with registered keys signs an assertion; forged, replayed, expired, long-lived, misaddressed or unsigned ones
/// fail, and so does a secret or a bare `client_id` for such a client.
@Suite struct PrivateKeyJWTTests {
    typealias IdP = IdentityProviderTests

    struct AppKey {
        let key = P256.Signing.PrivateKey()
        let kid = "app-key-1"

        var jwks: String {
            let raw = Array(key.publicKey.rawRepresentation)
            return jsonString([
                "keys": [
                    [
                        "kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                        "x": Base64URL.encode(Array(raw[0..<32])), "y": Base64URL.encode(Array(raw[32..<64])),
                    ]
                ]
            ])
        }

        /// A compact JWS over `claims` with this key (or `alg` as given, unsigned for `none`).
        func sign(_ claims: [String: Any], alg: String = "ES256", kid: String? = nil) throws -> String {
            let header = Base64URL.encode(Array(jsonString(["alg": alg, "kid": kid ?? self.kid, "typ": "JWT"]).utf8))
            let input = header + "." + Base64URL.encode(Array(jsonString(claims).utf8))
            guard alg == "ES256" else { return input + "." }
            return input + "." + Base64URL.encode(Array(try key.signature(for: Data(input.utf8)).rawRepresentation))
        }
    }

    static func claims(
        _ clientID: String, now: Date, aud: Any = "http://localhost:8080/oauth/token",
        lifetime: TimeInterval = 60, jti: String = UUID().uuidString
    ) -> [String: Any] {
        [
            "iss": clientID, "sub": clientID, "aud": aud, "exp": Int(now.timeIntervalSince1970 + lifetime),
            "iat": Int(now.timeIntervalSince1970), "jti": jti,
        ]
    }

    @Test(arguments: TestDatabase.all)
    func clientsWithKeysSignAssertionsThatAreCheckedStrictly(_ db: TestDatabase) async throws {
        let server = TestServer(db)
        try await server.seedUser("ada", password: "correct horse battery")
        let app = AppKey()
        let registered = try await server.withStore { store in
            var registration = ClientRegistry.Registration(name: "Keyed", redirectURIs: [IdP.redirect])
            registration.firstParty = true
            registration.jwks = app.jwks
            return try await ClientRegistry(store: store).add(registration, now: Date())
        }
        #expect(registered.1 == nil, "no secret for a client with keys")
        let id = registered.0.id
        let now = server.clock.now
        try await server.app().test(.router) { client in
            let discovery = try await client.json("/.well-known/openid-configuration").object
            #expect(
                (discovery["token_endpoint_auth_methods_supported"] as? [String])?.contains("private_key_jwt") == true)
            let session = try await signInWithPassword(client, "ada", "correct horse battery")
            func exchange(_ assertion: String?, extra: [(String, String)] = []) async throws -> TestResponse {
                let code = try await IdP.code(client, session, clientID: id)
                var form = [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", IdP.redirect),
                    ("code_verifier", IdP.verifier),
                ]
                if let assertion {
                    form += [
                        ("client_assertion_type", ClientRegistry.assertionType), ("client_assertion", assertion),
                    ]
                }
                return try await client.execute(
                    uri: "/oauth/token", method: .post, headers: IdP.formType, body: IdP.form(form + extra))
            }
            let good = try app.sign(Self.claims(id, now: now))
            #expect(try await exchange(good).status == .ok)
            // The same assertion again is a replay.
            #expect(try await exchange(good).errorCode == "invalid_client")
            let other = AppKey()
            let refused: [(String, String)] = [
                (try other.sign(Self.claims(id, now: now)), "another key"),
                (try app.sign(Self.claims(id, now: now), kid: "unknown"), "unknown kid"),
                (try app.sign(Self.claims(id, now: now), alg: "none"), "alg none"),
                (try app.sign(Self.claims(id, now: now), alg: "HS256"), "alg HS256"),
                (try app.sign(Self.claims(id, now: now, aud: "https://elsewhere.example/token")), "audience"),
                (try app.sign(Self.claims(id, now: now, lifetime: -1)), "expired"),
                (try app.sign(Self.claims(id, now: now, lifetime: 3600)), "lives too long"),
                (try app.sign(Self.claims("sesame_nobody", now: now)), "another client"),
                (try app.sign(Self.claims(id, now: now).merging(["sub": "x"]) { $1 }), "sub"),
            ]
            for (assertion, why) in refused {
                #expect(try await exchange(assertion).errorCode == "invalid_client", "\(why)")
            }
            // An array audience naming the issuer is fine.
            #expect(
                try await exchange(try app.sign(Self.claims(id, now: now, aud: ["http://localhost:8080"]))).status
                    == .ok)
            // Neither a bare client_id nor an assertion with a secret stands in for the assertion.
            #expect(try await exchange(nil, extra: [("client_id", id)]).errorCode == "invalid_client")
            #expect(
                try await exchange(try app.sign(Self.claims(id, now: now)), extra: [("client_secret", "x")]).errorCode
                    == "invalid_request")
        }
        // Registering a private key or a set without kid is refused.
        await #expect(throws: AdminError.self) {
            try await server.withStore { store in
                var registration = ClientRegistry.Registration(name: "Bad", redirectURIs: [IdP.redirect])
                registration.jwks =
                    #"{"keys": [{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "d": "AA", "kid": "k"}]}"#
                return try await ClientRegistry(store: store).add(registration, now: Date())
            }
        }
    }
}
