import ChatProtocol

/// What a replay expects of a frame the server sent: its fields as `path: value`
/// pairs for a `frames` assertion, with what may differ between two runs left loose.
///
/// - `serverTime`, `lastActiveAt` and `connectionId` match by type only: they are
///   clock readings and numbering that a replay need not reproduce.
/// - `errorDescription` is left out: it is for people and may change
///   (docs/PROTOCOL.md, section 2); `errorCode` is kept.
/// - A user object is checked by `uid` and `status`, a list of them by the list of
///   each (`users[*].uid`): the other fields are fixture data, not behaviour.
enum FramePattern {
    static let loose: [String: String] = ["serverTime": "number", "lastActiveAt": "number", "connectionId": "string"]
    static let ignored: Set<String> = ["errorDescription"]

    /// The frame's fields as ordered `path: value` pairs (empty for a frame that is not an object).
    static func fields(of frame: JSONValue) -> [(String, JSONValue)] {
        guard frame.objectValue != nil else { return [] }
        var fields: [(String, JSONValue)] = []
        flatten(frame, path: "", into: &fields)
        return fields
    }

    /// Whether the trace kept only a summary of this frame (it was longer than the trace keeps whole).
    static func isSummary(_ frame: JSONValue) -> Bool {
        frame["summarized"]?.boolValue == true && frame["fnv1a64"] != nil
    }

    private static func flatten(_ value: JSONValue, path: String, into fields: inout [(String, JSONValue)]) {
        func join(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        switch value {
        case .object(let object) where !path.isEmpty && isUser(value):
            fields.append((join("uid"), object["uid"]!))
            fields.append((join("status"), object["status"]!))
        case .object(let object) where object.isEmpty:
            if !path.isEmpty { fields.append((path, value)) }
        case .object(let object):
            for (key, item) in object where !ignored.contains(key) {
                if let type = loose[key] {
                    fields.append((join(key), ["type": .string(type)]))
                } else {
                    flatten(item, path: join(key), into: &fields)
                }
            }
        case .array(let items) where !items.isEmpty && items.allSatisfy(isUser):
            fields.append(("\(path)[*].uid", .array(items.map { $0["uid"]! })))
            fields.append(("\(path)[*].status", .array(items.map { $0["status"]! })))
        default:
            fields.append((path, value))
        }
    }

    private static func isUser(_ value: JSONValue) -> Bool {
        value["uid"]?.stringValue != nil && value["status"]?.stringValue != nil
    }
}
