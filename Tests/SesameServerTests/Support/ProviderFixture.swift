import Foundation

/// A provider list of this project's own making, with icons, for tests that need icons served (the bundled list
/// has names only). The icons are simple shapes drawn for these tests.
enum ProviderFixture {
    static let aaguid = "5e5a3e00-5e5a-4e00-8000-0000000000f1"
    static let name = "Example Passkeys"
    static let light =
        ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d6f42"/><circle cx="8" cy="8" r="4" fill="#fff"/></svg>"##
    static let dark =
        ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#8fd3a8"/><circle cx="8" cy="8" r="4" fill="#111"/></svg>"##

    static func dataURI(_ svg: String) -> String { "data:image/svg+xml;base64," + Data(svg.utf8).base64EncodedString() }

    /// Writes the list to a temporary file and returns its path.
    static func file() throws -> String {
        let list = [aaguid: ["name": name, "icon_light": dataURI(light), "icon_dark": dataURI(dark)]]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sesame-providers-\(UUID().uuidString).json"
        ).path
        try JSONSerialization.data(withJSONObject: list).write(to: URL(fileURLWithPath: path))
        return path
    }
}
