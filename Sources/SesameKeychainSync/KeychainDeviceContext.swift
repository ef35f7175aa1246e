import Foundation
import Hummingbird
import SesameCore

/// An enrolled keychain device, as a device token proved it.
package struct KeychainDevice: Sendable {
    package let enrollment: KeychainEnrollment
    package let user: User

    package init(enrollment: KeychainEnrollment, user: User) {
        self.enrollment = enrollment
        self.user = user
    }
}

/// The keychain sync routes' first context: the request as the session middleware left it, and the device a token
/// proved (`KeychainDeviceMiddleware` sets it), from which `KeychainDeviceRequestContext` is made.
package struct KeychainTokenRequestContext: ChildRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let clientAddress: String
    package let acceptLanguage: String?
    package var device: KeychainDevice?

    package init(context: SesameRequestContext) throws {
        self.coreContext = context.coreContext
        self.clientAddress = context.clientAddress
        self.acceptLanguage = context.acceptLanguage
        self.device = nil
    }

    package var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    package var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}

/// Authenticates the device token on the keychain sync routes (`Authorization: Bearer <device token>`), before
/// their context is made. A missing token leaves the request unauthenticated; a wrong one is counted against the
/// client address (`KeychainSync.authenticate`).
package struct KeychainDeviceMiddleware: RouterMiddleware {
    package typealias Context = KeychainTokenRequestContext
    package let sync: KeychainSync

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        context.device = try await sync.authenticate(
            authorization: request.headers[.authorization], address: context.clientAddress)
        return try await next(request, context)
    }
}

/// The context of the keychain sync routes: a device token authenticated the request, else 401
/// `keychain_device_unknown` with `WWW-Authenticate: Bearer`.
package struct KeychainDeviceRequestContext: ChildRequestContext, ClientContext {
    package var coreContext: CoreRequestContextStorage
    package let device: KeychainDevice
    package let clientAddress: String
    package let acceptLanguage: String?

    package init(context: KeychainTokenRequestContext) throws {
        guard let device = context.device else { throw APIError.keychainDeviceUnknown }
        self.coreContext = context.coreContext
        self.device = device
        self.clientAddress = context.clientAddress
        self.acceptLanguage = context.acceptLanguage
    }

    package var user: User { device.user }
    /// Push bodies carry a whole vault's sealed records; the sync routes read their bodies themselves with
    /// ``KeychainSync/maximumMessageBytes``.
    package var maxUploadSize: Int { KeychainSync.maximumMessageBytes }
    package var requestDecoder: SesameRequestDecoder { SesameRequestDecoder() }
    package var responseEncoder: SesameResponseEncoder { SesameResponseEncoder() }
}

extension APIError {
    package static var keychainDeviceUnknown: APIError {
        var error = APIError(
            .unauthorized, .keychainDeviceUnknown,
            "Send the keychain device token as a bearer token; enroll the device again if it was revoked.")
        error.wwwAuthenticate = "Bearer"
        return error
    }
    package static let keychainDeviceMismatch = APIError(
        .forbidden, .keychainDeviceMismatch, "This device token acts for another keychain device.")
    package static func keychainInvalidMessage(_ why: String) -> APIError {
        APIError(.badRequest, .keychainInvalidMessage, why)
    }
    package static func keychainVersionConflict(current: UInt64) -> APIError {
        var error = APIError(
            .conflict, .keychainVersionConflict, "The vault moved on since this device pulled; pull, merge, push again."
        )
        error.extra = ["version": String(current)]
        return error
    }
    package static let keychainWrongVault = APIError(
        .conflict, .keychainWrongVault, "This account's keychain is another vault.")
    package static let keychainLimitReached = APIError(
        .conflict, .keychainLimitReached, "Too many join requests or share offers are waiting.")
    package static func keychainQuotaReached(_ mebibytes: Int) -> APIError {
        APIError(
            .conflict, .keychainLimitReached,
            "This account's keychain would hold more than the server allows (\(mebibytes) MiB); nothing was written.")
    }
}
