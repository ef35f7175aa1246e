import SesameBytes

/// A key URI: everything an authenticator app needs to generate codes for one account.
///
/// Format (Google Authenticator "Key Uri Format", and Apple's `apple-otpauth:` variant that opens iCloud Keychain
/// directly):
///
/// ```
/// otpauth://TYPE/LABEL?PARAMETERS
/// TYPE       = "totp" / "hotp"
/// LABEL      = [ ISSUER ( ":" / "%3A" ) *( " " / "%20" ) ] ACCOUNT      ; neither part contains ":"
/// PARAMETERS = secret=BASE32 (required)  issuer=ISSUER (recommended; equal to the label's issuer if both)
///              algorithm=SHA1|SHA256|SHA512 (default SHA1)  digits=6|7|8 (default 6)
///              period=SECONDS (totp, default 30)  counter=N (hotp, required)
/// apple-otpauth://...  the same URI with "apple-" in front; issuer is the service's domain.
/// ```
///
/// Label and parameter values are percent-encoded (RFC 3986). Parsing is strict: unknown parameters are ignored
/// (apps add their own, such as `image`), but duplicated known parameters, malformed percent escapes, control
/// characters, a fragment, or an issuer prefix that disagrees with the `issuer` parameter are errors.
public struct OTPKeyURI: Sendable, Hashable {
    public enum Generator: Sendable, Hashable {
        case totp(TOTP)
        /// `counter` is the initial counter value the URI carries.
        case hotp(HOTP, counter: UInt64)
    }

    /// The longest URI parsed, in bytes. A QR code holds at most 2,953 bytes; this leaves room for secrets of up
    /// to ``OTPSecret/maximumByteCount`` without accepting unbounded input.
    public static let maximumLength = 4096

    public let generator: Generator
    public let issuer: String?
    public let account: String

    public init(generator: Generator, issuer: String?, account: String) throws(OneTimeCodeError) {
        try Self.checkLabelPart(account, name: "account")
        guard !account.isEmpty else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "account name is empty")
        }
        // Spaces after the label's ':' are separators (Key URI format), so an account cannot begin with one.
        guard account.first != " " else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "account name begins with a space")
        }
        if let issuer {
            try Self.checkLabelPart(issuer, name: "issuer")
            guard !issuer.isEmpty else {
                throw OneTimeCodeError(.invalidKeyURI, reason: "issuer is empty")
            }
        }
        self.generator = generator
        self.issuer = issuer
        self.account = account
    }

    public var secret: OTPSecret {
        switch generator {
        case .totp(let totp): totp.secret
        case .hotp(let hotp, _): hotp.secret
        }
    }

    var hotp: HOTP {
        switch generator {
        case .totp(let totp): totp.hotp
        case .hotp(let hotp, _): hotp
        }
    }

    // MARK: Building

    /// The `otpauth://` form, for QR codes and authenticator apps.
    public var otpauthURI: String {
        var text = "otpauth://"
        let parameters: [(String, String)]
        switch generator {
        case .totp(let totp):
            text += "totp/"
            parameters = [("period", String(totp.period))]
        case .hotp(_, let counter):
            text += "hotp/"
            parameters = [("counter", String(counter))]
        }
        if let issuer {
            text += Self.percentEncode(issuer) + ":"
        }
        text += Self.percentEncode(account)
        text += "?secret=" + secret.base32
        if let issuer {
            text += "&issuer=" + Self.percentEncode(issuer)
        }
        text += "&algorithm=" + hotp.algorithm.rawValue + "&digits=" + String(hotp.digits)
        for (name, value) in parameters {
            text += "&" + name + "=" + value
        }
        return text
    }

    /// The `apple-otpauth://` form, which opens the system password manager's code setup directly.
    /// The issuer must be present and be the service's domain, which the password manager uses to suggest the
    /// saved account to attach the code to.
    public func appleOtpauthURI() throws(OneTimeCodeError) -> String {
        guard let issuer, Host.isValid(issuer) else {
            throw OneTimeCodeError(.invalidHost, reason: "apple-otpauth: needs the service's domain as issuer")
        }
        return "apple-" + otpauthURI
    }

    // MARK: Parsing

    /// Parses an `otpauth://` or `apple-otpauth://` URI.
    public init(parsing text: String) throws(OneTimeCodeError) {
        try self.init(parsing: text, minimumSecretByteCount: OTPSecret.minimumByteCount)
    }

    /// Parses a URI whose secret may be shorter than 128 bits, down to `minimumSecretByteCount` bytes: for a
    /// password manager storing what a service issued (see ``OTPSecret/init(bytes:minimumByteCount:)``).
    public init(parsing text: String, minimumSecretByteCount: Int) throws(OneTimeCodeError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "longer than \(Self.maximumLength) bytes")
        }
        guard !bytes.contains(UInt8(ascii: "#")) else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "key URIs have no fragment")
        }
        guard let schemeEnd = Self.find(Array("://".utf8), in: bytes) else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "not of the form scheme://type/label")
        }
        let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        let isApple: Bool
        switch scheme {
        case "otpauth": isApple = false
        case "apple-otpauth": isApple = true
        default: throw OneTimeCodeError(.invalidKeyURI, reason: "scheme is not otpauth or apple-otpauth")
        }
        let rest = bytes[(schemeEnd + 3)...]
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "no label after the type")
        }
        let type = String(decoding: rest[..<slash], as: UTF8.self).lowercased()
        let afterType = rest[(slash + 1)...]
        let question = afterType.firstIndex(of: UInt8(ascii: "?")) ?? afterType.endIndex
        let label = try Self.percentDecode(afterType[..<question], what: "label")
        let query = question < afterType.endIndex ? afterType[(question + 1)...] : []

        // Label: "issuer:account", "issuer: account" or "account".
        var labelIssuer: String? = nil
        var account = label
        let parts = label.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: break
        case 2:
            labelIssuer = String(parts[0])
            account = String(parts[1].drop(while: { $0 == " " }))
        default:
            throw OneTimeCodeError(.invalidKeyURI, reason: "label has more than one ':'")
        }

        var parameters: [String: String] = [:]
        for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let name = try Self.percentDecode(pair[..<equals], what: "parameter name").lowercased()
            let value =
                equals < pair.endIndex ? try Self.percentDecode(pair[(equals + 1)...], what: "parameter value") : ""
            guard Self.knownParameters.contains(name) else { continue }
            guard parameters[name] == nil else {
                throw OneTimeCodeError(.invalidKeyURI, reason: "parameter '\(name)' appears twice")
            }
            parameters[name] = value
        }

        guard let secretText = parameters["secret"], !secretText.isEmpty else {
            throw OneTimeCodeError(.missingSecret, reason: "no secret parameter")
        }
        let secret = try OTPSecret(base32: secretText, minimumByteCount: minimumSecretByteCount)
        let algorithm =
            try parameters["algorithm"].map { (text) throws(OneTimeCodeError) in
                try OTPAlgorithm(parsing: text)
            } ?? .sha1
        let digits = try Self.integer(parameters["digits"], name: "digits", default: 6)

        let issuerParameter = parameters["issuer"]
        if let labelIssuer, let issuerParameter, labelIssuer != issuerParameter {
            throw OneTimeCodeError(.issuerMismatch, reason: "label issuer and issuer parameter differ")
        }
        let issuer = issuerParameter ?? labelIssuer
        if isApple {
            guard let issuer, Host.isValid(issuer) else {
                throw OneTimeCodeError(.invalidHost, reason: "apple-otpauth: issuer must be the service's domain")
            }
        }

        let generator: Generator
        switch type {
        case "totp":
            guard parameters["counter"] == nil else {
                throw OneTimeCodeError(.invalidKeyURI, reason: "totp URI with a counter parameter")
            }
            let period = try Self.integer(parameters["period"], name: "period", default: TOTP.defaultPeriod)
            generator = .totp(try TOTP(secret: secret, algorithm: algorithm, digits: digits, period: period))
        case "hotp":
            guard parameters["period"] == nil else {
                throw OneTimeCodeError(.invalidKeyURI, reason: "hotp URI with a period parameter")
            }
            guard let counterText = parameters["counter"] else {
                throw OneTimeCodeError(.missingCounter, reason: "hotp URI without a counter parameter")
            }
            guard let counter = Self.decimal(counterText) else {
                throw OneTimeCodeError(.invalidKeyURI, reason: "counter is not a decimal number")
            }
            generator = .hotp(try HOTP(secret: secret, algorithm: algorithm, digits: digits), counter: counter)
        default:
            throw OneTimeCodeError(.invalidKeyURI, reason: "type is not totp or hotp")
        }
        try self.init(generator: generator, issuer: issuer, account: account)
    }

    static let knownParameters: Set<String> = ["secret", "issuer", "algorithm", "digits", "period", "counter"]

    // MARK: Helpers

    static func checkLabelPart(_ part: String, name: String) throws(OneTimeCodeError) {
        guard !part.contains(":") else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "\(name) contains ':'")
        }
        // Control and format characters (bidirectional overrides, zero-width characters) and line breaks can make
        // an authenticator app show one issuer while the label holds another.
        let invisible: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        guard !part.unicodeScalars.contains(where: { invisible.contains($0.properties.generalCategory) }) else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "\(name) contains a control or format character")
        }
        guard part.utf8.count <= 512 else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "\(name) is longer than 512 bytes")
        }
    }

    /// RFC 3986 unreserved characters and "@" (allowed in both paths and queries) go as they are.
    static func percentEncode(_ text: String) -> String {
        var output: [UInt8] = []
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "@"):
                output.append(byte)
            default:
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func percentDecode(_ bytes: ArraySlice<UInt8>, what: String) throws(OneTimeCodeError) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex,
                    let high = Hex.value(ofDigit: bytes[index + 1]), let low = Hex.value(ofDigit: bytes[index + 2])
                else {
                    throw OneTimeCodeError(.invalidKeyURI, reason: "malformed percent escape in \(what)")
                }
                output.append(high << 4 | low)
                index += 3
            } else {
                guard byte > 0x20, byte < 0x7F else {
                    throw OneTimeCodeError(.invalidKeyURI, reason: "unencoded space or non-ASCII byte in \(what)")
                }
                output.append(byte)
                index += 1
            }
        }
        guard let text = String(validating: output, as: UTF8.self) else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "\(what) is not UTF-8")
        }
        return text
    }

    static func decimal(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return UInt64(text)
    }

    static func integer(_ text: String?, name: String, default value: Int) throws(OneTimeCodeError) -> Int {
        guard let text else { return value }
        guard let number = decimal(text), number <= UInt64(Int32.max) else {
            throw OneTimeCodeError(.invalidKeyURI, reason: "\(name) is not a decimal number")
        }
        return Int(number)
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
