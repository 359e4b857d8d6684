import ChatProtocol
import Foundation

/// Users plus app settings: what a server starts with.
public struct FixtureSet: Sendable {
    public var directory: UserDirectory
    public var settings: AppSettings

    public init(directory: UserDirectory, settings: AppSettings) {
        self.directory = directory
        self.settings = settings
    }

    /// The fixtures compiled into the binary (a copy of Fixtures/users.json and app.json).
    public static func embedded() throws(FixtureError) -> FixtureSet {
        try FixtureSet(usersJSON: EmbeddedFixtures.users, appJSON: EmbeddedFixtures.app)
    }

    /// Reads `users.json` and `app.json` from a folder.
    public static func load(folder: String) throws(FixtureError) -> FixtureSet {
        func read(_ name: String) throws(FixtureError) -> String {
            let path = (folder as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw FixtureError("cannot read \(path)")
            }
            return String(decoding: data, as: UTF8.self)
        }
        return try FixtureSet(usersJSON: read("users.json"), appJSON: read("app.json"))
    }

    /// Parses the two documents.
    public init(usersJSON: String, appJSON: String) throws(FixtureError) {
        do {
            directory = try UserDirectory(json: try JSONParser.parse(usersJSON))
            settings = try AppSettings(json: try JSONParser.parse(appJSON))
        } catch let error as FixtureError {
            throw error
        } catch {
            throw FixtureError("fixtures are not valid JSON: \(error)")
        }
    }
}
