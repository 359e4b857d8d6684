import ChatProtocol
import Yams

/// Reads YAML into the project's ordered ``JSONValue``, keeping mapping order and
/// the line of every mapping for error messages.
enum YAMLDocument {
    /// Parses one YAML document. Plain scalars become numbers, booleans or null by
    /// YAML's core schema; quoted scalars stay strings.
    static func parse(_ text: String) throws(ScenarioError) -> JSONValue {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ScenarioError("not valid YAML: \(error)")
        }
        guard let node else { throw ScenarioError("the file is empty") }
        return convert(node)
    }

    private static func convert(_ node: Node) -> JSONValue {
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
            return .array(sequence.map(convert))
        case .mapping(let mapping):
            return .object(JSONObject(mapping.map { (key, value) in (key.string ?? "", convert(value)) }))
        case .alias:
            return .null
        }
    }
}

/// A scenario file that cannot be run as written.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
