import ChatProtocol

/// What every input surface is fuzzed with (control bodies, recordings, scenario files,
/// driver lines, flags): numbers at the extremes, every JSON type in place of another,
/// unicode that breaks naive handling, and sizes at and past the limits. A structured
/// input is mutated by replacing one field or element anywhere in it with one of these.
enum FuzzValues {
    /// Numbers where conversions trap or ranges end.
    static let numbers: [JSONValue] = [
        1e308, -1e308, 1e16, 1e17, -1e16, 1.7976931348623157e308, 4.9e-324, 1e-7, -0.0, 0, -1, 1, 0.5, -0.5,
        65535, 65536, 99999, 2_147_483_648, 4_294_967_296, 9_007_199_254_740_993, .integer(.max), .integer(.min),
        1.8446744073709552e19, 31_622_401, 86_401, 253_402_300_800,
    ]
    /// Every JSON type.
    static let shapes: [JSONValue] = ["", "x", "1e308", "-1", [], [1], ["x"], [:], ["a": 1], true, false, nil]
    /// Text that naive handling gets wrong.
    static let texts: [JSONValue] = [
        "é✓ü", "\u{0}", "a\u{0}b", "\u{202E}evil", "👩‍👩‍👧", "\u{FEFF}bom", "line\nbreak", "tab\t", "\"quoted\"", "a/b",
        "../../etc/passwd", "%00", "<redacted>", .string(String(repeating: "a", count: 300)),
        .string(String(repeating: "é", count: 5_000)),
    ]

    /// One of the above.
    static func any(_ random: inout FuzzRandom) -> JSONValue {
        switch random.below(10) {
        case 0...4: random.pick(numbers)
        case 5...7: random.pick(shapes)
        default: random.pick(texts)
        }
    }

    /// JSON texts that are not what a reader expects: broken, not an object, nested
    /// deeply, numbers past Double's range, or large.
    static func rawText(_ random: inout FuzzRandom) -> String {
        switch random.below(12) {
        case 0: "{"
        case 1: "{\"a\":}"
        case 2: "[]"
        case 3: "\"text\""
        case 4: "null"
        case 5: "{\"n\":1e999}"
        case 6: "{\"n\":-1e999}"
        case 7: "{\"n\":123456789012345678901234567890}"
        case 8: String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        case 9: "{\"s\":\"\\ud800\"}"
        case 10: "{\"a\":1,\"a\":\"twice\"}"
        default: "{\"pad\":\"" + String(repeating: "x", count: random.pick([1 << 16, (1 << 20) - 10, 1 << 20])) + "\"}"
        }
    }

    /// `value` with one field or element, at any depth, replaced by ``any(_:)``, removed,
    /// or (in an object) joined by an unknown field; the label says what was done where.
    static func mutate(_ value: JSONValue, _ random: inout FuzzRandom) -> (value: JSONValue, label: String) {
        var paths: [[String]] = []
        collect(value, [], into: &paths)
        guard !paths.isEmpty else { return (any(&random), "replaced") }
        let path = random.pick(paths)
        let name = path.last ?? ""
        switch random.below(10) {
        case 0: return (set(value, path, nil), "removed \(name)")
        case 1: return (set(value, Array(path.dropLast()) + ["extra"], any(&random)), "added a field")
        default: return (set(value, path, any(&random)), "\(name)")
        }
    }

    /// The path of every field and element below `value`.
    private static func collect(_ value: JSONValue, _ path: [String], into paths: inout [[String]]) {
        switch value {
        case .object(let object):
            for (key, member) in object {
                paths.append(path + [key])
                collect(member, path + [key], into: &paths)
            }
        case .array(let items):
            for (index, item) in items.enumerated() {
                paths.append(path + ["\(index)"])
                collect(item, path + ["\(index)"], into: &paths)
            }
        default:
            break
        }
    }

    /// `value` with the member at `path` set to `new` (nil: removed).
    private static func set(_ value: JSONValue, _ path: [String], _ new: JSONValue?) -> JSONValue {
        guard let key = path.first else { return new ?? .null }
        switch value {
        case .object(var object):
            if path.count == 1 {
                object[key] = new
            } else if let member = object[key] {
                object[key] = set(member, Array(path.dropFirst()), new)
            }
            return .object(object)
        case .array(var items):
            guard let index = Int(key), items.indices.contains(index) else { return value }
            if path.count == 1 {
                if let new { items[index] = new } else { items.remove(at: index) }
            } else {
                items[index] = set(items[index], Array(path.dropFirst()), new)
            }
            return .array(items)
        default:
            return value
        }
    }
}
