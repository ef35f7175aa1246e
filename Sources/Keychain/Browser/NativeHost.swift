import Foundation
import WebAuthn

/// What `sesame keychain native-host` answers the extension: one reply per ``NativeHostRequest``.
///
///     reply = { "id": uint / null, "ok": true,  "result": result }
///           / { "id": uint / null, "ok": false, "error": { "name": tstr, "code": tstr } }
///     result = { "rpId": tstr, "accounts": [* account] }    ; prepare, ceremony "get"
///            / { "rpId": tstr, "userName": tstr }           ; prepare, ceremony "create"
///            / { "credential": RegistrationResponseJSON / AuthenticationResponseJSON }   ; create, get
///            / { "updated": uint }                          ; signal, signalCurrentUserDetails and
///                                                           ; signalAllAcceptedCredentials
///            / { ? "rpId": tstr, "unknown": [* account] }   ; signal, signalUnknownCredential
///            / { }                                          ; remove
///            / { "generators": [* { "itemId": tstr, "title": tstr }] }   ; codes: the site's code generators
///            / { "code": tstr }                             ; code: the picked generator's current code
///            / { "passwords": [* { "itemId": tstr, "username": tstr }] } ; passwords: the site's saved passwords
///            / { "username": tstr, "password": tstr }       ; password: the picked one, to fill
///            / { }                                          ; savePassword
///            / window-result                                ; status, unlock, lock, items, item, itemCode
///                                                           ; (NativeHost+Window.swift)
///     account = { "credentialId": tstr, "userName": tstr, "displayName": tstr }
///
/// `error.name` is the DOMException a browser rejects with (``domExceptionName(for:)``), `error.code` the
/// ``KeychainError/Code`` name; neither carries input bytes or secrets. `id` is null only when the request could not
/// be read far enough to find one.
///
/// Every request is checked against its own origin: the RP ID must be the origin's host or a registrable domain
/// suffix of it (``WebOrigin/relyingPartyId(_:suffixes:)``), and only passkeys with that RP ID are listed or used,
/// so a page never reaches another site's passkey, even by naming its credential ID. Accounts are listed only to the
/// extension, which shows them in its own prompt; the page gets the one picked.
public struct NativeHost: Sendable {
    public typealias Opener = @Sendable () throws(KeychainError) -> Keychain

    let suffixes: PublicSuffixList
    let open: Opener
    let session: SessionControl?
    let syncControl: SyncControl?
    /// Items the window deleted, kept in this process's memory for a short while so that "Undo" can put them back.
    let recentlyDeleted = RecentlyDeleted()

    /// `open` opens the vault for each request (so changes synced in between are seen) and must not prompt.
    /// `session` starts and ends unlock sessions for the toolbar window; without it, `unlock`, `lock` and `status`
    /// are refused.
    /// `sync` reaches the vault's sync server for the window's `syncNow` and `approveDevice`, which only
    /// ``replyWithSync(to:)`` answers.
    public init(
        suffixes: PublicSuffixList, session: SessionControl? = nil, sync: SyncControl? = nil,
        open: @escaping Opener
    ) {
        self.suffixes = suffixes
        self.session = session
        self.syncControl = sync
        self.open = open
    }

    /// The reply to one message's JSON body; never throws (errors are replies).
    public func reply(to message: [UInt8]) -> [UInt8] {
        let request: NativeHostRequest
        do throws(KeychainError) {
            request = try NativeHostRequest(json: message)
        } catch {
            return Self.failure(id: Self.bestEffortId(message), error)
        }
        do throws(KeychainError) {
            return try Self.success(id: request.id, answer(request))
        } catch {
            return Self.failure(id: request.id, error)
        }
    }

    func answer(_ request: NativeHostRequest) throws(KeychainError) -> JSONValue {
        let options = request.options ?? []
        switch request.kind {
        case .prepare where request.ceremony == .create:
            let keychain = try open()
            let checked = try keychain.checkCreation(optionsJSON: options, origin: request.origin, suffixes: suffixes)
            return .object(["rpId": .string(checked.rpId), "userName": .string(checked.userName)])
        case .prepare:
            let keychain = try open()
            let (rpId, items) = try keychain.passkeyCandidates(
                optionsJSON: options, origin: request.origin, suffixes: suffixes)
            let accounts: [JSONValue] = items.compactMap { item in
                guard case .passkey(let p) = item.content else { return nil }
                return .object([
                    "credentialId": .string(Base64URL.encode(p.credentialId)), "userName": .string(p.userName),
                    "displayName": .string(p.displayName),
                ])
            }
            return .object(["rpId": .string(rpId), "accounts": .array(accounts)])
        case .create:
            let keychain = try open()
            let registration = try keychain.createPasskey(
                optionsJSON: options, origin: request.origin, suffixes: suffixes)
            try keychain.save()
            return .object(["credential": try BrowserJSON.decoded(registration.responseJSON)])
        case .get:
            let keychain = try open()
            let assertion = try keychain.signIn(
                optionsJSON: options, origin: request.origin, suffixes: suffixes, credentialId: request.credentialId)
            try keychain.save()
            return .object(["credential": try BrowserJSON.decoded(assertion.responseJSON)])
        case .signal:
            return try applySignal(request)
        case .codes:
            let keychain = try open()
            let generators = keychain.codeGenerators(for: try WebOrigin(request.origin), suffixes: suffixes)
            return .object([
                "generators": .array(
                    generators.map { .object(["itemId": .string($0.id.text), "title": .string($0.title)]) })
            ])
        case .code:
            let keychain = try open()
            let origin = try WebOrigin(request.origin)
            // The generator must serve this origin now, whatever the extension was told before.
            guard let id = request.itemId,
                keychain.codeGenerators(for: origin, suffixes: suffixes).contains(where: { $0.id == id })
            else { throw KeychainError(.itemNotFound, reason: "no code generator for this site with that ID") }
            let code = try keychain.code(for: id)
            try keychain.save()  // an HOTP counter moved on
            return .object(["code": .string(code.code)])
        case .passwords:
            let keychain = try open()
            let saved = keychain.passwords(for: try WebOrigin(request.origin), suffixes: suffixes)
            return .object([
                "passwords": .array(
                    saved.compactMap { item in
                        guard case .password(let p) = item.content else { return nil }
                        return .object(["itemId": .string(item.id.text), "username": .string(p.username)])
                    })
            ])
        case .password:
            let keychain = try open()
            let origin = try WebOrigin(request.origin)
            guard let id = request.itemId,
                let item = keychain.passwords(for: origin, suffixes: suffixes).first(where: { $0.id == id }),
                case .password(let p) = item.content
            else { throw KeychainError(.itemNotFound, reason: "no password for this site with that ID") }
            return .object(["username": .string(p.username), "password": .string(p.password)])
        case .savePassword:
            let keychain = try open()
            _ = try keychain.savePassword(
                username: request.username ?? "", password: request.password ?? "", for: try WebOrigin(request.origin))
            try keychain.save()
            return .object([:])
        case .status, .unlock, .lock, .items, .item, .itemCode, .updateItem, .deleteItem, .undoDelete, .exportCXF,
            .importCXF, .syncStatus, .syncNow, .approveDevice, .addPassword,
            .removeDevice, .addCode, .waitingDevices, .refuseDevice, .generatePassword, .importBitwarden,
            .importKeePassXC, .addCodeQR:
            return try answerWindow(request)
        case .remove:
            guard let rpId = request.rpId, let credentialId = request.credentialId else {
                throw KeychainError(.malformedNativeMessage, reason: "a remove request needs 'rpId' and 'credentialId'")
            }
            let checked = try WebOrigin(request.origin).relyingPartyId(rpId, suffixes: suffixes)
            let keychain = try open()
            try keychain.removePasskey(rpId: checked, credentialId: credentialId)
            try keychain.save()
            return .object([:])
        }
    }

    /// WebAuthn L3 §5.1.10, after ``checkSignal(_:)``: `signalCurrentUserDetails` renames the user's passkeys
    /// for the RP ID (`{"updated": n}`); `signalUnknownCredential` answers with the passkey it names, if the
    /// keychain holds it (`{"unknown": [account]}`), for the extension to ask before a `remove` request;
    /// `signalAllAcceptedCredentials` hides the user's passkeys the list leaves out and shows the ones it names
    /// (`{"updated": n}`).
    func applySignal(_ request: NativeHostRequest) throws(KeychainError) -> JSONValue {
        let rpId = try checkSignal(request)
        guard let payload = request.payload else { return .object([:]) }
        switch request.signal {
        case .currentUserDetails:
            let keychain = try open()
            let userHandle = (try? Base64URL.decode(payload.userId ?? "")) ?? []
            let updated = try keychain.applyCurrentUserDetails(
                rpId: rpId, userHandle: userHandle, name: payload.name ?? "", displayName: payload.displayName ?? "")
            if updated > 0 { try keychain.save() }
            return .object(["updated": .int(updated)])
        case .unknownCredential:
            let keychain = try open()
            let id = (try? Base64URL.decode(payload.credentialId ?? "")) ?? []
            guard let (_, passkey) = keychain.passkey(rpId: rpId, credentialId: id) else {
                return .object(["unknown": .array([])])
            }
            return .object([
                "rpId": .string(rpId),
                "unknown": .array([
                    .object([
                        "credentialId": .string(Base64URL.encode(passkey.credentialId)),
                        "userName": .string(passkey.userName), "displayName": .string(passkey.displayName),
                    ])
                ]),
            ])
        case .allAcceptedCredentials:
            let keychain = try open()
            let userHandle = (try? Base64URL.decode(payload.userId ?? "")) ?? []
            let accepted = Set((payload.allAcceptedCredentialIds ?? []).compactMap { try? Base64URL.decode($0) })
            let updated = try keychain.applyAllAcceptedCredentials(
                rpId: rpId, userHandle: userHandle, accepted: accepted)
            if updated > 0 { try keychain.save() }
            return .object(["updated": .int(updated)])
        case .none:
            return .object([:])
        }
    }

    /// WebAuthn L3 §5.1.10: the RP ID must be valid for the origin (else SecurityError) and the IDs base64url
    /// (else TypeError), checked as a browser checks them. Returns the RP ID.
    @discardableResult
    func checkSignal(_ request: NativeHostRequest) throws(KeychainError) -> String {
        guard let payload = request.payload, let signal = request.signal else {
            throw KeychainError(.malformedNativeMessage, reason: "a signal request needs 'signal' and 'payload'")
        }
        let origin = try WebOrigin(request.origin)
        let rpId = try origin.relyingPartyId(payload.rpId, suffixes: suffixes)
        func base64url(_ text: String?, _ what: String) throws(KeychainError) {
            guard let text, (try? Base64URL.decode(text)) != nil else {
                throw KeychainError(.invalidOptions, reason: "'\(what)' is not base64url")
            }
        }
        switch signal {
        case .unknownCredential:
            try base64url(payload.credentialId, "credentialId")
        case .allAcceptedCredentials:
            try base64url(payload.userId, "userId")
            guard let ids = payload.allAcceptedCredentialIds else {
                throw KeychainError(.invalidOptions, reason: "'allAcceptedCredentialIds' is missing")
            }
            for id in ids { try base64url(id, "allAcceptedCredentialIds") }
        case .currentUserDetails:
            try base64url(payload.userId, "userId")
            guard payload.name != nil, payload.displayName != nil else {
                throw KeychainError(.invalidOptions, reason: "'name' and 'displayName' are required")
            }
        }
        return rpId
    }

    /// The DOMException name a browser rejects with for each refusal.
    public static func domExceptionName(for code: KeychainError.Code) -> String {
        switch code {
        case .invalidOrigin, .rpIdNotAllowed: "SecurityError"
        case .invalidOptions: "TypeError"
        case .algorithmNotSupported, .extensionNotSupported: "NotSupportedError"
        case .invalidExtensionInput: "SyntaxError"
        case .credentialExcluded: "InvalidStateError"
        default: "NotAllowedError"
        }
    }

    // MARK: Replies

    private struct Reply: Encodable {
        let id: Int?
        let ok: Bool
        let result: JSONValue?
        let error: [String: String]?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)  // null when unknown
            try container.encode(ok, forKey: .ok)
            try container.encodeIfPresent(result, forKey: .result)
            try container.encodeIfPresent(error, forKey: .error)
        }
        enum CodingKeys: String, CodingKey { case id, ok, result, error }
    }

    static func success(id: Int, _ result: JSONValue) -> [UInt8] {
        let reply = (try? BrowserJSON.encoded(Reply(id: id, ok: true, result: result, error: nil))) ?? []
        guard !reply.isEmpty, reply.count <= NativeMessageFrame.maximumLength else {
            return failure(
                id: id, KeychainError(.nativeMessageTooLarge, reason: "the reply is over the native messaging limit"))
        }
        return reply
    }

    static func failure(id: Int?, _ error: KeychainError) -> [UInt8] {
        let body = ["name": domExceptionName(for: error.code), "code": error.code.name]
        // Fixed keys and values from fixed vocabularies: this encoding cannot fail.
        return (try? BrowserJSON.encoded(Reply(id: id, ok: false, result: nil, error: body))) ?? []
    }

    /// The reply to a frame the host will not read (too long): no id, since the body was not read.
    public static func reply(refusing error: KeychainError) -> [UInt8] { failure(id: nil, error) }

    private struct OnlyId: Decodable { let id: Int }

    static func bestEffortId(_ message: [UInt8]) -> Int? {
        guard let id = try? JSONDecoder().decode(OnlyId.self, from: Data(message)).id,
            (0...NativeHostRequest.maximumId).contains(id)
        else { return nil }
        return id
    }
}
