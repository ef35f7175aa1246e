import Foundation

/// Who made a passkey, by the AAGUID in its attested credential data: a name to show beside it in account
/// management and, when known, icons for light and dark backgrounds.
///
/// The AAGUID says which provider (password manager, platform, security key model) created the credential. With
/// attestation "none" it is not verified, so it is only good for display, never for a security decision.
public struct AuthenticatorProvider: Sendable, Hashable {
    public let aaguid: AAGUID
    public let name: String
    /// For light backgrounds.
    public let lightIcon: ProviderIcon?
    /// For dark backgrounds.
    public let darkIcon: ProviderIcon?

    public init(aaguid: AAGUID, name: String, lightIcon: ProviderIcon?, darkIcon: ProviderIcon?) {
        self.aaguid = aaguid
        self.name = name
        self.lightIcon = lightIcon
        self.darkIcon = darkIcon
    }
}

/// An icon image decoded from a `data:` URI and checked: SVG or PNG only, at most a given size.
///
/// Icons are meant to be served from the relying party's own origin (a page's CSP then needs no `data:` source).
/// An SVG document can carry script: this type keeps only SVG that ``PassiveSVG`` finds passive (a parse with an
/// allow-list of elements and attributes), and icons should still be served with a sandboxing
/// `Content-Security-Policy`.
public struct ProviderIcon: Sendable, Hashable {
    public enum MediaType: String, Sendable, Hashable {
        case svg = "image/svg+xml"
        case png = "image/png"
    }

    public let mediaType: MediaType
    public let bytes: [UInt8]

    /// Default size cap for one icon, decoded.
    public static let defaultMaxBytes = 64 * 1024

    private static let prefixes: [(String, MediaType)] = [
        ("data:image/svg+xml;base64,", .svg),
        ("data:image/png;base64,", .png),
    ]
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Parses `data:image/svg+xml;base64,…` or `data:image/png;base64,…`; nil for any other media type or
    /// encoding, bad base64, more than `maxBytes` decoded, a PNG without the PNG signature, or an SVG that is not
    /// UTF-8 text with an `<svg` element or that has active content.
    public init?(dataURI: String, maxBytes: Int = ProviderIcon.defaultMaxBytes) {
        guard let (prefix, type) = Self.prefixes.first(where: { dataURI.hasPrefix($0.0) }) else { return nil }
        let encoded = dataURI.utf8.dropFirst(prefix.utf8.count)
        // Base64 turns 3 bytes into 4 characters: refuse before decoding anything larger than the cap allows.
        guard !encoded.isEmpty, encoded.count <= (maxBytes + 2) / 3 * 4,
            let data = Data(base64Encoded: Data(encoded)), !data.isEmpty, data.count <= maxBytes
        else { return nil }
        let bytes = [UInt8](data)
        switch type {
        case .png:
            guard bytes.starts(with: Self.pngSignature) else { return nil }
        case .svg:
            guard let text = String(validating: bytes, as: UTF8.self), Self.isPassiveSVG(text) else { return nil }
        }
        self.mediaType = type
        self.bytes = bytes
    }

    /// A passive SVG picture (``PassiveSVG``: allow-listed elements and attributes, no script, no external loads).
    /// Serving the icon with a sandboxing CSP is the second barrier, not the only one.
    static func isPassiveSVG(_ text: String) -> Bool { PassiveSVG.isPassive(text) }
}

/// A table of ``AuthenticatorProvider`` by AAGUID, read from a JSON document shaped like the community AAGUID
/// list (github.com/passkeydeveloper/passkey-authenticator-aaguids, `aaguid.json`; schema `aaguid.json.schema`):
///
/// ```
/// { "<aaguid, lower-case 8-4-4-4-12>": { "name": string, ? "icon_light": data-URI, ? "icon_dark": data-URI }, … }
/// ```
///
/// Entries whose key is not an AAGUID, or whose name is empty, longer than 100 characters or has control
/// characters, are left out; an icon that ``ProviderIcon`` refuses is dropped and the name kept. A document that
/// is not a JSON object of objects is `invalidProviderList`.
public struct AuthenticatorProviders: Sendable {
    private let table: [AAGUID: AuthenticatorProvider]

    private struct Entry: Decodable {
        let name: String?
        let icon_light: String?
        let icon_dark: String?
    }

    public init(json: [UInt8], maxIconBytes: Int = ProviderIcon.defaultMaxBytes) throws(WebAuthnError) {
        let entries: [String: Entry]
        do {
            entries = try JSONDecoder().decode([String: Entry].self, from: Data(json))
        } catch {
            throw WebAuthnError(.invalidProviderList, detail: "not a JSON object of provider entries")
        }
        var table: [AAGUID: AuthenticatorProvider] = [:]
        for (key, entry) in entries {
            guard let aaguid = AAGUID(uuidString: key), let name = entry.name.flatMap(Self.displayableName) else {
                continue
            }
            table[aaguid] = AuthenticatorProvider(
                aaguid: aaguid, name: name,
                lightIcon: entry.icon_light.flatMap { ProviderIcon(dataURI: $0, maxBytes: maxIconBytes) },
                darkIcon: entry.icon_dark.flatMap { ProviderIcon(dataURI: $0, maxBytes: maxIconBytes) }
            )
        }
        self.table = table
    }

    public init(_ providers: [AuthenticatorProvider] = []) {
        var table: [AAGUID: AuthenticatorProvider] = [:]
        for provider in providers { table[provider.aaguid] = provider }
        self.table = table
    }

    /// The provider for this AAGUID; nil when unknown (and always for the all-zero AAGUID, which means "not
    /// said").
    public subscript(aaguid: AAGUID) -> AuthenticatorProvider? {
        aaguid == .zero ? nil : table[aaguid]
    }

    public var count: Int { table.count }

    static func displayableName(_ raw: String) -> String? {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...100).contains(name.count),
            !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return name
    }
}
