import ArgumentParser
import Foundation
import MockChatServer

/// `mockchat fixtures`: tools for fixture folders.
struct FixturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixtures",
        abstract: "Make fixture folders for `mockchat serve --fixtures`.",
        subcommands: [FixturesGenerate.self])
}

/// `mockchat fixtures generate --users N --out DIR`.
struct FixturesGenerate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write users.json (N plain users, user-0 … user-N-1, no relations) and app.json (the built-in settings).",
        discussion: "Example: mockchat fixtures generate --users 20000 --out big && mockchat serve --fixtures big")

    @Option(help: "Number of users.")
    var users = 1_000

    @Option(help: "Folder to write users.json and app.json to (created if missing).")
    var out: String

    func validate() throws {
        guard users >= 1, users <= 10_000_000 else { throw ValidationError("--users must be between 1 and 10000000") }
    }

    func run() throws {
        let files = FileManager.default
        do {
            try files.createDirectory(atPath: out, withIntermediateDirectories: true)
            try FixtureGenerator.usersJSON(count: users)
                .write(toFile: (out as NSString).appendingPathComponent("users.json"), atomically: true, encoding: .utf8)
            try FixtureGenerator.appJSON
                .write(toFile: (out as NSString).appendingPathComponent("app.json"), atomically: true, encoding: .utf8)
        } catch {
            throw ValidationError("cannot write fixtures to '\(out)': \(error.localizedDescription)")
        }
        print("wrote \(users) users to \(out)/users.json and the settings to \(out)/app.json")
    }
}
