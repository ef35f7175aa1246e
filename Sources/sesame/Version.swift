import SesameBuildInfo

/// What `sesame --version` prints: the semantic version (the newest heading of CHANGELOG.md, which a test holds it
/// to) and the commit the binary was built from, or "commit unknown" when the build was not given one
/// (`SESAME_COMMIT`, set by scripts/release and scripts/test; see Package.swift).
enum SesameVersion {
    static let semantic = "0.10.0"

    static var commit: String? {
        guard let pointer = sesame_build_commit() else { return nil }
        return String(cString: pointer)
    }

    static var description: String {
        "\(semantic) (\(commit.map { "commit \($0)" } ?? "commit unknown"))"
    }
}
