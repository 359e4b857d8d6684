import ChatProtocol
import Foundation

/// Users plus app settings: what a server starts with.
public struct FixtureSet: Sendable {
    public var directory: UserDirectory
    public var settings: AppConfiguration

    public init(directory: UserDirectory, settings: AppConfiguration) {
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
        return try FixtureSet(usersJSON: read("users.json"), appJSON: read("app.json"),
                              names: ((folder as NSString).appendingPathComponent("users.json"),
                                      (folder as NSString).appendingPathComponent("app.json")))
    }

    /// Parses the two documents. Errors start with the document's name from `names`, and
    /// a syntax error gives its line and column.
    public init(usersJSON: String, appJSON: String,
                names: (users: String, app: String) = ("users.json", "app.json")) throws(FixtureError) {
        directory = try Self.parse(usersJSON, name: names.users) { json throws(FixtureError) in try UserDirectory(json: json) }
        settings = try Self.parse(appJSON, name: names.app) { json throws(FixtureError) in try AppConfiguration(json: json) }
    }

    private static func parse<T>(_ text: String, name: String,
                                 _ build: (JSONValue) throws(FixtureError) -> T) throws(FixtureError) -> T {
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            let (line, column) = position(of: error.offset, in: text)
            throw FixtureError("\(name):\(line):\(column): not valid JSON: \(error)")
        }
        do {
            return try build(json)
        } catch {
            throw FixtureError("\(name): \(error.description)")
        }
    }

    /// The 1-based line and column of a byte offset.
    static func position(of offset: Int, in text: String) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in text.utf8.prefix(offset) {
            if byte == 10 { line += 1; column = 1 } else { column += 1 }
        }
        return (line, column)
    }
}
