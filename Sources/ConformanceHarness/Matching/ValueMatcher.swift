import ChatProtocol
import Foundation

/// What an expected value in a scenario means: a literal, or a mapping of matchers.
///
/// A literal matches an equal value, numbers compared by value at any depth (`1` and
/// `1.0` are equal inside objects and lists too). A mapping whose keys are all matcher
/// names checks each of them:
/// `contains` (substring, list element or object subset), `matches` (a regular
/// expression that must match somewhere in a string), `gt` / `ge` / `lt` / `le`
/// (numbers), `type` (string, number, integer, boolean, array, object, null) and
/// `absent: true` (the field is missing; `absent: false`: it is present).
public enum ValueMatcher {
    /// Matcher names, in the order the docs list them.
    public static let names = ["contains", "matches", "gt", "ge", "lt", "le", "type", "absent"]

    /// The JSON types `type:` accepts.
    public static let typeNames = ["string", "number", "integer", "boolean", "array", "object", "null"]

    /// Whether `expected` is a mapping of matchers rather than a literal object.
    public static func isMatcher(_ expected: JSONValue) -> Bool {
        guard let object = expected.objectValue, !object.isEmpty else { return false }
        return object.keys.allSatisfy(names.contains)
    }

    /// Whether `actual` (nil: absent) satisfies `expected`.
    public static func matches(_ actual: JSONValue?, _ expected: JSONValue) -> Bool {
        guard isMatcher(expected), let object = expected.objectValue else {
            guard let actual else { return false }
            return equal(actual, expected)
        }
        return object.allSatisfy { name, operand in check(name, operand, actual) }
    }

    /// Problems with a matcher mapping's operands, for load-time checks.
    public static func problems(_ expected: JSONValue) -> [String] {
        guard isMatcher(expected), let object = expected.objectValue else { return [] }
        var found: [String] = []
        for (name, operand) in object {
            switch name {
            case "matches":
                if let pattern = operand.stringValue {
                    if (try? NSRegularExpression(pattern: pattern)) == nil { found.append("'\(pattern)' is not a valid regular expression") }
                } else {
                    found.append("matches takes a regular expression string")
                }
            case "gt", "ge", "lt", "le":
                if operand.doubleValue == nil { found.append("\(name) takes a number") }
            case "type":
                if !(operand.stringValue.map(typeNames.contains) ?? false) {
                    found.append("type is one of \(typeNames.joined(separator: ", "))")
                }
            case "absent":
                if operand.boolValue == nil { found.append("absent takes true or false") }
            default:
                break
            }
        }
        return found
    }

    /// Equality with numbers compared by value, recursively.
    public static func equal(_ actual: JSONValue, _ expected: JSONValue) -> Bool {
        if let a = number(actual), let b = number(expected) { return abs(a - b) < 1e-9 }
        switch (actual, expected) {
        case (.array(let left), .array(let right)):
            return left.count == right.count && zip(left, right).allSatisfy { equal($0, $1) }
        case (.object(let left), .object(let right)):
            return left.count == right.count && left.allSatisfy { key, value in right[key].map { equal(value, $0) } ?? false }
        default:
            return actual == expected
        }
    }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer, .double: value.doubleValue
        default: nil
        }
    }

    private static func check(_ name: String, _ operand: JSONValue, _ actual: JSONValue?) -> Bool {
        switch name {
        case "absent":
            return (operand.boolValue ?? true) == (actual == nil)
        case "type":
            guard let actual else { return false }
            return typeName(actual) == operand.stringValue || (operand.stringValue == "number" && number(actual) != nil)
        case "contains":
            switch actual {
            case .string(let text)?: return operand.stringValue.map(text.contains) ?? false
            case .array(let items)?: return items.contains { matches($0, operand) }
            case .object(let object)?:
                guard let wanted = operand.objectValue else { return false }
                return wanted.allSatisfy { key, value in matches(object[key], value) }
            default: return false
            }
        case "matches":
            guard let text = actual?.stringValue, let pattern = operand.stringValue,
                  let regex = try? NSRegularExpression(pattern: pattern) else { return false }
            return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        case "gt", "ge", "lt", "le":
            guard let value = actual.flatMap(number), let bound = operand.doubleValue else { return false }
            switch name {
            case "gt": return value > bound
            case "ge": return value >= bound
            case "lt": return value < bound
            default: return value <= bound
            }
        default:
            return false
        }
    }

    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .string: "string"
        case .integer: "integer"
        case .double: "number"
        case .bool: "boolean"
        case .array: "array"
        case .object: "object"
        case .null: "null"
        }
    }
}
