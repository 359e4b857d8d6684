import Foundation

/// Folders and programs of this package, found from this file's location, so tests
/// work from any working directory.
public enum PackagePaths {
    /// The package's root folder.
    public static let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent()  // MockChatTestSupport
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()

    /// A path below the root.
    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The `mockchat` beside the test runner (the same build), else the debug build.
    public static let mockchat: String = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mockchat").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return root.appendingPathComponent(".build/debug/mockchat").path
    }()
}
