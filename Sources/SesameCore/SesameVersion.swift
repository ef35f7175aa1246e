import SesameBuildInfo

/// What `sesame --version` prints: the semantic version (the newest heading of CHANGELOG.md, which a test holds it
/// to) and the commit the binary was built from, or "commit unknown" when the build was not given one
/// (`SESAME_COMMIT`, set by scripts/release and scripts/test; see Package.swift). In the core, so the server's
/// overview (`GET /api/admin/overview`) names the same version.
package enum SesameVersion {
    package static let semantic = "0.10.0"

    package static var commit: String? {
        guard let pointer = sesame_build_commit() else { return nil }
        return String(cString: pointer)
    }

    package static var description: String {
        "\(semantic) (\(commit.map { "commit \($0)" } ?? "commit unknown"))"
    }
}
