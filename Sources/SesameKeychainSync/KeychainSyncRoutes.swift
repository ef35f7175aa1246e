import Foundation
import Hummingbird
import Keychain
import NIOCore
import WebAuthn
import SesameCore
import SesamePasskeys

/// Keychain sync (docs/keychain.md, "Sync over `sesame serve`").
///
/// Enrollment is a signed-in route: the person, signed in (recently) on their account, asks for a device token
/// for one keychain device (`sesame keychain enroll` does this with a session token), lists the enrolled devices
/// and revokes one. The sync routes take only a device token (`KeychainDeviceRequestContext`); their bodies and
/// answers are the keychain's wire messages (`SyncMessages.swift`), which the server stores as opaque bytes.
package struct KeychainSyncRoutes {
    package let sesame: ServerCore
    package let sync: KeychainSync

    package init(sesame: ServerCore, store: any Store & KeychainSyncStore) {
        self.sesame = sesame
        self.sync = KeychainSync(sesame: sesame, store: store)
    }

    package struct EnrollmentRequest: Decodable, Sendable {
        package let name: String
    }

    package struct EnrollmentBody: Codable, Sendable {
        package let id: String
        package let name: String
        /// The keychain device ID (base64url) the token acts for, once it has been used.
        package let device: String?
        package let createdAt: Date
        package let lastUsedAt: Date

        package init(_ e: KeychainEnrollment) {
            id = e.id
            name = e.name
            device = e.device.map(Base64URL.encode)
            createdAt = e.createdAt
            lastUsedAt = e.lastUsedAt
        }
    }

    package struct Enrolled: ResponseEncodable, Sendable {
        /// The device token, shown only in this answer: send it as `Authorization: Bearer <token>`.
        package let token: String
        package let enrollment: EnrollmentBody
    }

    package struct EnrollmentList: ResponseEncodable, Sendable {
        package let enrollments: [EnrollmentBody]
    }

    package func register(on router: Router<SesameRequestContext>) {
        // Enrolling gives access to the account's ciphertext, so it needs a recent sign-in; listing and revoking
        // (which only takes access away) need a session.
        let recent = router.group("/api/keychain/enrollments", context: RecentlySignedInRequestContext.self)
        let signedIn = router.group("/api/keychain/enrollments", context: SignedInRequestContext.self)

        recent.post("") { request, context in
            let body = try await request.decode(as: EnrollmentRequest.self, context: context)
            let name = try ShownNames.passkeyName(body.name)
            let (token, enrollment) = try await sync.enroll(user: context.user, name: name, context: context)
            return EditedResponse(
                status: .created, headers: [.cacheControl: "no-store"],
                response: Enrolled(token: token, enrollment: EnrollmentBody(enrollment)))
        }

        signedIn.get("") { _, context in
            EnrollmentList(
                enrollments: try await sync.store.keychainEnrollments(userID: context.user.id).map(
                    EnrollmentBody.init))
        }

        signedIn.delete("/{id}") { _, context in
            let id = try context.parameters.require("id")
            guard id.utf8.count <= 64, try await sync.store.deleteKeychainEnrollment(userID: context.user.id, id: id)
            else { throw APIError.notFound }
            await sesame.audit.record(.keychainDeviceRevoked, .success, user: context.user, context: context)
            return Status(status: "revoked")
        }

        let device = router.group("/api/keychain", context: KeychainTokenRequestContext.self)
            .add(middleware: KeychainDeviceMiddleware(sync: sync))
            .group(context: KeychainDeviceRequestContext.self)

        device.get("/sync") { request, context in
            let since = try Self.version(request.uri.queryParameters["since"])
            let id = try Self.bytes(request.uri.queryParameters["device"], count: 16, name: "device")
            return Self.message(try await sync.pull(context.device, since: since, for: id).json)
        }

        device.post("/sync") { request, context in
            let bytes = try await Self.body(request)
            let push = try KeychainSync.parse("push") { () throws(KeychainError) in try PushRequest(json: bytes) }
            return Self.message(try await sync.push(context.device, push, context: context).json)
        }

        device.post("/join") { request, context in
            let bytes = try await Self.body(request)
            let join = try KeychainSync.parse("join request") { () throws(KeychainError) in
                try JoinRequest(json: bytes)
            }
            try await sync.bind(context.device, to: join.device)
            guard
                try await sync.store.postKeychainJoinRequest(
                    userID: context.user.id, join, limit: KeychainSync.waitingJoinRequests, at: sesame.now)
            else { throw APIError.keychainLimitReached }
            return EditedResponse(status: .created, response: Status(status: "requested"))
        }

        device.get("/join") { _, context in
            let requests = try await sync.store.keychainJoinRequests(userID: context.user.id)
            return Self.list("requests", requests.map(\.json))
        }

        device.post("/join/{request}/approval") { request, context in
            let path = try Self.bytes(context.parameters.get("request"), count: 16, name: "request")
            let bytes = try await Self.body(request)
            let approval = try KeychainSync.parse("join approval") { () throws(KeychainError) in
                try JoinApproval(json: bytes)
            }
            guard approval.request == path else {
                throw APIError.keychainInvalidMessage("The approval names another request than the path.")
            }
            guard try await sync.store.postKeychainJoinApproval(userID: context.user.id, approval) else {
                throw APIError.notFound
            }
            return EditedResponse(status: .created, response: Status(status: "approved"))
        }

        // Refusing: an enrolled device of the account drops a waiting request; the joining device then finds it gone.
        device.delete("/join/{request}") { _, context in
            let path = try Self.bytes(context.parameters.get("request"), count: 16, name: "request")
            guard try await sync.store.refuseKeychainJoinRequest(userID: context.user.id, request: path) else {
                throw APIError.notFound
            }
            return Status(status: "refused")
        }

        // Only the device that asked to join reads its approval; to anyone else it does not exist.
        device.get("/join/{request}/approval") { _, context in
            let path = try Self.bytes(context.parameters.get("request"), count: 16, name: "request")
            guard let found = try await sync.store.keychainJoinApproval(userID: context.user.id, request: path),
                found.device == context.device.enrollment.device, let approval = found.approval
            else { throw APIError.notFound }
            return Self.message(approval.json)
        }

        device.post("/shares") { request, context in
            let bytes = try await Self.body(request)
            let share = try KeychainSync.parse("share") { () throws(KeychainError) in try ShareMessage(json: bytes) }
            switch try await sync.store.postKeychainShare(
                userID: context.user.id, share, limit: KeychainSync.openShares,
                quota: sesame.configuration.keychainQuotaBytes, at: sesame.now)
            {
            case .offered: break
            case .tooMany: throw APIError.keychainLimitReached
            case .overQuota: throw APIError.keychainQuotaReached(sesame.configuration.keychainQuota)
            }
            return EditedResponse(status: .created, response: Status(status: "offered"))
        }

        // Offers to a sharing key are listed to any enrolled device (the recipient may be another account's
        // keychain; each offer is sealed to the recipient's key). Offers by a sender key are listed only to the
        // account that made them.
        device.get("/shares") { request, context in
            let query = request.uri.queryParameters
            switch (query["recipient"], query["sender"]) {
            case (let recipient?, nil):
                let key = try Self.bytes(recipient, count: 32, name: "recipient")
                return Self.list("shares", try await sync.store.keychainShares(recipient: key).map(\.json))
            case (nil, let sender?):
                let key = try Self.bytes(sender, count: 32, name: "sender")
                return Self.list(
                    "shares", try await sync.store.keychainShares(userID: context.user.id, sender: key).map(\.json))
            default:
                throw APIError.keychainInvalidMessage("Give exactly one of recipient and sender.")
            }
        }

        device.delete("/shares/{id}") { request, context in
            let id = try Self.bytes(context.parameters.get("id"), count: 16, name: "id")
            let sender = try Self.bytes(request.uri.queryParameters["sender"], count: 32, name: "sender")
            guard try await sync.store.revokeKeychainShare(userID: context.user.id, id: id, sender: sender) else {
                throw APIError.notFound
            }
            return Status(status: "revoked")
        }
    }

    // MARK: Adapters

    /// The request body, up to ``KeychainSync/maximumMessageBytes``, as JSON.
    package static func body(_ request: Request) async throws -> [UInt8] {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" else { throw APIError.unsupportedMediaType }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > KeychainSync.maximumMessageBytes {
            throw APIError.bodyTooLarge
        }
        do {
            let buffer = try await request.body.collect(upTo: KeychainSync.maximumMessageBytes)
            return Array(buffer.readableBytesView)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge
        } catch {
            throw APIError.malformedJSON
        }
    }

    /// A wire message as the answer.
    package static func message(_ json: [UInt8]) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// `{"format": 1, "<name>": [message…]}` from messages already in their wire form.
    package static func list(_ name: String, _ messages: [[UInt8]]) -> Response {
        var json = Array(#"{"format":1,""#.utf8) + Array(name.utf8) + Array(#"":["#.utf8)
        for (index, message) in messages.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += message
        }
        json += Array("]}".utf8)
        return message(json)
    }

    /// A decimal vault version from the query (`since`).
    package static func version(_ text: Substring?) throws -> UInt64 {
        guard let text, text.utf8.count <= 20, text.utf8.allSatisfy({ (48...57).contains($0) }),
            let value = UInt64(text)
        else { throw APIError.keychainInvalidMessage("Give since as a decimal vault version.") }
        return value
    }

    /// A base64url value of exactly `count` bytes from the query or path.
    package static func bytes(_ text: (some StringProtocol)?, count: Int, name: String) throws -> [UInt8] {
        guard let text, text.utf8.count <= 64, let bytes = try? Base64URL.decode(String(text)), bytes.count == count
        else { throw APIError.keychainInvalidMessage("Give \(name) as \(count) bytes of unpadded base64url.") }
        return bytes
    }
}
