import ChatProtocol
import Foundation

/// Writes a scenario as a YAML file in the catalogue's style (docs/SCENARIOS.md):
/// one line per step in flow style, `expect` steps as a block with one assertion
/// per line, other steps on one line with their modifiers (`expect_error`) on the
/// lines below. Strings stay unquoted where YAML would read them back as the same
/// string, and are quoted (JSON escapes) otherwise.
public enum ScenarioWriter {
    /// Writes `text` to `folder/name`, creating the folder; returns the path, or nil when
    /// it could not be written.
    public static func save(_ text: String, in folder: String, as name: String) -> String? {
        let path = (folder as NSString).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        } catch {
            return nil
        }
    }

    /// The file text. `comments` become `#` lines at the top.
    public static func yaml(id: String, title: String, source: String, profile: String? = nil, app: JSONValue?,
                            seed: UInt64, steps: [JSONValue], comments: [String] = [], rules: [String] = []) -> String {
        var lines = comments.map { $0.isEmpty ? "#" : "# \($0)" }
        lines.append("id: \(scalar(id))")
        lines.append("title: \(scalar(title))")
        lines.append("source: \(scalar(source))")
        if !rules.isEmpty { lines.append("rules: [" + rules.map(scalar).joined(separator: ", ") + "]") }
        if let profile { lines.append("profile: \(scalar(profile))") }
        if let app { lines.append("app: \(flow(app))") }
        // Written as the signed 64-bit pattern: YAML integers stop at Int64, and the loader
        // reads the pattern back into the same UInt64.
        lines.append("seed: \(Int64(bitPattern: seed))")
        lines.append("steps:")
        for step in steps {
            guard let object = step.objectValue, let (key, value) = object.first(where: { _ in true }) else { continue }
            if key == "expect" || key == "expect_not", let assertions = value.objectValue {
                lines.append("  - \(scalar(key)):")
                for (name, expected) in assertions { lines.append("      \(scalar(name)): \(flow(expected))") }
            } else {
                lines.append("  - \(scalar(key)): \(flow(value))")
                for (modifier, argument) in object.dropFirst() { lines.append("    \(scalar(modifier)): \(flow(argument))") }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A duration as a scenario writes it: `30s` for whole seconds, `1250ms` otherwise.
    public static func duration(_ milliseconds: Int64) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }

    /// A value in YAML flow style.
    static func flow(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .double: return value.description
        case .string(let text): return scalar(text)
        case .array(let items): return "[" + items.map(flow).joined(separator: ", ") + "]"
        case .object(let object):
            return "{" + object.map { "\(scalar($0.key)): \(flow($0.value))" }.joined(separator: ", ") + "}"
        }
    }

    /// A string as a plain scalar when that is unambiguous, else double-quoted.
    static func scalar(_ text: String) -> String {
        isPlain(text) ? text : JSONValue.string(text).description
    }

    private static let reserved: Set<String> = ["true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"]

    private static func isPlain(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !reserved.contains(text.lowercased()) else { return false }
        let allowed = text.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", ".", "-", "/": true
            default: false
            }
        }
        guard allowed else { return false }
        if ("a"..."z").contains(first) || ("A"..."Z").contains(first) || first == "_" { return true }
        // Durations such as 30s or 1500ms: digits then a unit, never read as numbers.
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        return !digits.isEmpty && ["ms", "s", "m", "h"].contains(String(text.dropFirst(digits.count)))
    }
}
