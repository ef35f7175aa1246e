extension PublicKeyCredentialJSON where Response == AuthenticatorAssertionResponseJSON {
    /// The assertion a value read by ``JSONReader`` holds, built without `JSONDecoder`; nil for any shape this path
    /// does not handle, which the caller then decodes with `JSONDecoder` (``decode(_:)``, or `Decodable`), so every
    /// refusal keeps its usual error. It handles what browsers send on every sign-in: the members of
    /// ``AuthenticationResponseJSON`` with `clientExtensionResults` empty, null or absent. Members it does not know
    /// are ignored, as `JSONDecoder` ignores them; `FuzzFastJSON` checks that both give the same value.
    public init?(fastPath value: JSONValue) {
        guard case .object(let members) = value else { return nil }
        var id: String?
        var rawId: [UInt8]?
        var response: AuthenticatorAssertionResponseJSON?
        var attachment: AuthenticatorAttachment?
        var type: String?
        for member in members {
            switch member.key {
            case "id":
                guard case .string(let text) = member.value else { return nil }
                id = text
            case "rawId":
                guard let bytes = FastPath.base64URL(member.value) else { return nil }
                rawId = bytes
            case "response":
                guard let decoded = AuthenticatorAssertionResponseJSON(fastPath: member.value) else { return nil }
                response = decoded
            case "authenticatorAttachment":
                switch member.value {
                case .null: attachment = nil
                case .string(let text): attachment = AuthenticatorAttachment(rawValue: text)
                default: return nil
                }
            case "clientExtensionResults":
                // Outputs are rare on sign-in; any there are decoded the usual way.
                switch member.value {
                case .null: break
                case .object(let outputs) where outputs.isEmpty: break
                default: return nil
                }
            case "type":
                guard case .string(let text) = member.value else { return nil }
                type = text
            default:
                continue
            }
        }
        guard let id, let rawId, let response, let type else { return nil }
        self.init(id: id, rawId: rawId, response: response, authenticatorAttachment: attachment, type: type)
    }
}

extension AuthenticatorAssertionResponseJSON {
    /// The `response` member of an assertion read by ``JSONReader``; nil for any shape `JSONDecoder` should judge.
    public init?(fastPath value: JSONValue) {
        guard case .object(let members) = value else { return nil }
        var clientDataJSON: [UInt8]?
        var authenticatorData: [UInt8]?
        var signature: [UInt8]?
        var userHandle: [UInt8]?
        for member in members {
            switch member.key {
            case "clientDataJSON": clientDataJSON = FastPath.base64URL(member.value)
            case "authenticatorData": authenticatorData = FastPath.base64URL(member.value)
            case "signature": signature = FastPath.base64URL(member.value)
            case "userHandle":
                if member.value == .null { continue }
                guard let bytes = FastPath.base64URL(member.value) else { return nil }
                userHandle = bytes
            default: continue
            }
        }
        guard let clientDataJSON, let authenticatorData, let signature else { return nil }
        self.init(
            clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
            userHandle: userHandle)
    }
}

enum FastPath {
    /// The bytes of a base64url string value (as ``Base64URLBytes`` decodes them), or nil.
    static func base64URL(_ value: JSONValue) -> [UInt8]? {
        guard case .string(let text) = value else { return nil }
        return try? Base64URL.decode(text)
    }
}
