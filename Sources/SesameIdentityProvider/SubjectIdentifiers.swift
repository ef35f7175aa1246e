import Crypto
import Foundation
import WebAuthn
import SesameCore

/// The `sub` a client sees (OpenID Connect Core §8): the account's id for ordinary ("public") clients, or for a
/// pairwise client a value of its sector's own, `base64url(HMAC-SHA256(key, sector ‖ 0x00 ‖ account id))`, with the
/// key derived from the server secret (HKDF-SHA256, its own `info`), so it is stable across nodes and restarts and
/// two sectors cannot link their users by it. The sector is the host of the client's redirect URIs (the scheme for
/// a private-use scheme), which must all share it (checked when the client is registered).
package struct SubjectIdentifiers: Sendable {
    private let key: SymmetricKey

    package init(serverSecret: [UInt8]) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: serverSecret),
            info: Data("sesame pairwise subject identifiers v1".utf8), outputByteCount: 32)
    }

    package func subject(userID: String, client: OAuthClient) -> String {
        guard client.pairwiseSubject, let sector = ClientRules.sector(client.redirectURIs) else { return userID }
        let mac = HMAC<SHA256>.authenticationCode(for: Array(sector.utf8) + [0] + Array(userID.utf8), using: key)
        return Base64URL.encode(Array(mac))
    }
}
