import CBuildInfo

/// Which MockChat this is: the release number and the commit it was built from. Shown by
/// `mockchat --version` and written into trace headers and reports, so a report says what
/// produced it.
public enum BuildInfo {
    /// The release number; CHANGELOG.md has a section for each.
    public static let version = "0.1.0"

    /// The commit's short hash, or "unknown" when built without git metadata.
    public static let commit = String(cString: mockchat_build_commit())

    /// `0.1.0 (commit 1a2b3c4)`.
    public static var description: String { "\(version) (commit \(commit))" }
}
