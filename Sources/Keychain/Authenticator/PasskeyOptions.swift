import Foundation
import WebAuthn

/// Reads `PublicKeyCredentialCreationOptionsJSON` / `PublicKeyCredentialRequestOptionsJSON` (W3C WebAuthn
/// Level 3 §5.1.8, §5.1.9) with the `WebAuthn` library's types, either bare or wrapped as `{"publicKey": …}` the
/// way `navigator.credentials` takes them. Malformed options are `invalidOptions` (a browser's `TypeError`).
enum PasskeyOptions {
    static let maximumLength = 64 * 1024

    static func creation(_ json: [UInt8]) throws(KeychainError) -> PublicKeyCredentialCreationOptionsJSON {
        try decode(PublicKeyCredentialCreationOptionsJSON.self, json)
    }

    static func request(_ json: [UInt8]) throws(KeychainError) -> PublicKeyCredentialRequestOptionsJSON {
        try decode(PublicKeyCredentialRequestOptionsJSON.self, json)
    }

    private struct Wrapped<T: Decodable>: Decodable { let publicKey: T }

    private static func decode<T: Decodable>(_ type: T.Type, _ json: [UInt8]) throws(KeychainError) -> T {
        guard json.count <= maximumLength else {
            throw KeychainError(.invalidOptions, reason: "options longer than \(maximumLength) bytes")
        }
        let decoder = JSONDecoder()
        if let wrapped = try? decoder.decode(Wrapped<T>.self, from: Data(json)) { return wrapped.publicKey }
        do {
            return try decoder.decode(T.self, from: Data(json))
        } catch let DecodingError.keyNotFound(key, _) {
            throw KeychainError(.invalidOptions, reason: "the options lack '\(key.stringValue)'")
        } catch {
            throw KeychainError(.invalidOptions, reason: "the options are not WebAuthn options JSON")
        }
    }
}
