import ChatProtocol
import ReferenceClient
import Yams

/// Reads YAML into the project's ordered ``JSONValue``, keeping mapping order and
/// where every key and list item was written, for error messages.
enum YAMLDocument {
    /// Parses one YAML document. Plain scalars become numbers, booleans or null by
    /// YAML's core schema; quoted scalars stay strings.
    static func parse(_ text: String) throws(ScenarioError) -> (value: JSONValue, locations: SourceLocations) {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            let syntax = YAMLSyntaxError(error)
            throw ScenarioError(syntax.message, at: syntax.mark.map { .init(line: $0.line, column: $0.column) })
        }
        guard let node else { throw ScenarioError("the file is empty", at: .init(line: 1, column: 1)) }
        var locations = SourceLocations()
        let value = convert(node, path: [], into: &locations)
        return (value, locations)
    }

    private static func convert(_ node: Node, path: [String], into locations: inout SourceLocations) -> JSONValue {
        if let mark = node.mark, locations[path] == nil { locations[path] = .init(line: mark.line, column: mark.column) }
        switch node {
        case .scalar(let scalar):
            if scalar.style == .plain {
                if node.null != nil { return .null }
                if let flag = node.bool { return .bool(flag) }
                if let number = node.int { return .integer(Int64(number)) }
                if let number = node.float { return .double(number) }
            }
            return .string(scalar.string)
        case .sequence(let sequence):
            return .array(sequence.enumerated().map { index, item in
                convert(item, path: path + [String(index)], into: &locations)
            })
        case .mapping(let mapping):
            return .object(JSONObject(mapping.map { (key, value) in
                let name = key.string ?? ""
                // The key's own position: where a reader looks for a misspelt name.
                if let mark = key.mark { locations[path + [name]] = .init(line: mark.line, column: mark.column) }
                return (name, convert(value, path: path + [name], into: &locations))
            }))
        case .alias:
            return .null
        }
    }
}

/// Line and column (1-based) of every key and list item of a document, by path
/// (`["steps", "3", "expect", "a.status"]`).
struct SourceLocations: Sendable {
    private var marks: [String: SourceLocation] = [:]

    subscript(path: [String]) -> SourceLocation? {
        get { marks[path.joined(separator: "\u{1F}")] }
        set { marks[path.joined(separator: "\u{1F}")] = newValue }
    }

    /// The location of `path`, or of its nearest written parent.
    func nearest(_ path: [String]) -> SourceLocation? {
        var path = path
        while true {
            if let found = self[path] { return found }
            guard !path.isEmpty else { return nil }
            path.removeLast()
        }
    }
}

/// A position in a scenario file.
public struct SourceLocation: Sendable, Equatable {
    public var line: Int
    public var column: Int
}

/// A scenario file that cannot be run as written, with where the problem is when known.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var location: SourceLocation?
    /// The file, once known (set by the loader).
    public var file: String?

    public init(_ message: String, at location: SourceLocation? = nil) {
        self.message = message
        self.location = location
    }

    /// `file:line:column: message`, as compilers print it.
    public var description: String {
        var prefix = file ?? ""
        if let location { prefix += (prefix.isEmpty ? "" : ":") + "\(location.line):\(location.column)" }
        return prefix.isEmpty ? message : "\(prefix): \(message)"
    }
}
