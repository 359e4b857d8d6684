import ChatProtocol

/// The `server.NAME` steps that stand for a control request (docs/SCENARIOS.md), in
/// both directions: the reader turns a shorthand into its request, and a generator
/// writes a request as its shorthand when one says the same, else as the general
/// `server.control: {method, path, body}`.
public enum ServerShorthand {
    /// What a shorthand's value becomes in the request.
    enum Body {
        /// The value is the body.
        case value
        /// The request has no body (the value is `{}`).
        case none
        /// The body is `{KEY: value}`.
        case wrapped(String)
    }

    /// One shorthand: `server.NAME: value` issues `method path` with the body `body` makes of the value.
    struct Entry {
        let name: String
        let method: String
        let path: String
        let body: Body
        /// When the value must be a mapping: what it takes, as the reader's error says
        /// (`server.NAME takes ...`).
        var mapping: String? = nil

        /// The control request of `server.NAME: value`.
        func request(_ value: JSONValue) -> (method: String, path: String, body: JSONValue) {
            switch body {
            case .value: (method, path, value)
            case .none: (method, path, .null)
            case .wrapped(let key): (method, path, .object(JSONObject([(key, value)])))
            }
        }
    }

    static let table: [Entry] = [
        Entry(name: "fault", method: "POST", path: "/control/faults", body: .value),
        Entry(name: "push", method: "POST", path: "/control/push", body: .value,
              mapping: "a mapping: a target and one of event, frame, bytes, close"),
        Entry(name: "clearFaults", method: "DELETE", path: "/control/faults", body: .none),
        Entry(name: "reset", method: "POST", path: "/control/reset", body: .none),
        Entry(name: "app", method: "POST", path: "/control/fixtures", body: .wrapped("app"),
              mapping: "a mapping of app settings"),
    ]

    /// The shorthand `server.NAME`, or nil when NAME is not one.
    static func entry(_ name: String) -> Entry? { table.first { $0.name == name } }

    /// The step that issues `method path` with `body` (null or `{}`: no body).
    public static func step(method: String, path: String, body: JSONValue) -> JSONValue {
        let empty = body.isNull || body.objectValue?.isEmpty == true
        for entry in table where entry.method == method && entry.path == path {
            switch entry.body {
            case .value where body.objectValue != nil && !empty:
                return ["server.\(entry.name)": body]
            case .none where empty:
                return ["server.\(entry.name)": .object(JSONObject())]
            case .wrapped(let key) where body.objectValue?.count == 1 && body[key]?.objectValue != nil:
                return ["server.\(entry.name)": body[key]!]
            default:
                continue
            }
        }
        var request = JSONObject([("method", .string(method)), ("path", .string(path))])
        if !empty { request["body"] = body }
        return ["server.control": .object(request)]
    }
}
