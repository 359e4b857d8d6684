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

    static let table: [(name: String, method: String, path: String, body: Body)] = [
        ("fault", "POST", "/control/faults", .value),
        ("clearFaults", "DELETE", "/control/faults", .none),
        ("reset", "POST", "/control/reset", .none),
        ("app", "POST", "/control/fixtures", .wrapped("app")),
    ]

    /// The control request of `server.NAME: value`, or nil when NAME is not a shorthand.
    static func request(_ name: String, _ value: JSONValue) -> (method: String, path: String, body: JSONValue)? {
        guard let entry = table.first(where: { $0.name == name }) else { return nil }
        switch entry.body {
        case .value: return (entry.method, entry.path, value)
        case .none: return (entry.method, entry.path, .null)
        case .wrapped(let key): return (entry.method, entry.path, .object(JSONObject([(key, value)])))
        }
    }

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
