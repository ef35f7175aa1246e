import Foundation
import Logging
import SesameCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Something that delivers an SMS message.
public protocol SMSSender: Sendable {
    func send(to phone: String, message: String) async throws
}

/// Development sender: prints the message to standard output (and hands it to `observer`, for tests). Refused on an
/// https origin unless `allowConsoleSMS` (docs/configuration.md).
public struct ConsoleSMSSender: SMSSender {
    package let observer: (@Sendable (String, String) -> Void)?
    public init(observer: (@Sendable (String, String) -> Void)? = nil) { self.observer = observer }
    public func send(to phone: String, message: String) async throws {
        if let observer {
            observer(phone, message)
        } else {
            // Unbuffered, so the message shows at once even when standard output is a file or pipe.
            FileHandle.standardOutput.write(Data("SMS to \(phone):\n\(message)\n".utf8))
        }
    }
}

/// POSTs `{"to": ..., "message": ...}` as JSON to the configured URL, with a 10-second timeout; any answer but 2xx
/// is a failure.
package struct WebhookSMSSender: SMSSender {
    package let url: URL
    package let logger: Logger

    package func send(to phone: String, message: String) async throws {
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(["to": phone, "message": message])
        let (_, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {
            throw APIError(.badGateway, .smsNotSent, "The text message could not be sent. Try again later.")
        }
    }
}

/// The SMS sender the configuration names.
package func makeSMSSender(_ configuration: ServerConfiguration, logger: Logger) -> any SMSSender {
    if configuration.smsSender != "console", let url = URL(string: configuration.smsSender) {
        return WebhookSMSSender(url: url, logger: logger)
    }
    return ConsoleSMSSender()
}
