/// Everything the server sends in a text frame: replies to requests and pushed events.
public enum ServerMessage: Sendable, Equatable {
    /// A successful reply: `{"id", "result": {...}}`.
    case result(id: RequestID, JSONObject)
    /// A failed request: `{"id", "error": {"errorCode", "errorDescription"}}`; `id` is
    /// `null` when the request's id could not be read.
    case error(id: RequestID?, ChatError)
    /// `{"event": "user.online", "user": {...}}` (004, onUserOnline).
    case userOnline(User)
    /// `{"event": "user.offline", "user": {...}}` (004, onUserOffline).
    case userOffline(User)
    /// `{"event": "device.kicked", "reason", "byDeviceId", "byPlatform"}`, sent just before
    /// the server closes the connection with 4001 (003, "Reconnection kick strategy").
    case deviceKicked(reason: String, byDeviceId: String, byPlatform: Platform)

    /// The reply to `login`.
    public static func loggedIn(id: RequestID, user: User, connectionId: String, serverTime: Double) -> ServerMessage {
        .result(id: id, JSONObject([("user", user.json), ("connectionId", .string(connectionId)),
                                    ("serverTime", .double(serverTime))]))
    }

    /// The reply to `ping`: the server's clock.
    public static func pong(id: RequestID, serverTime: Double) -> ServerMessage {
        .result(id: id, JSONObject([("pong", true), ("serverTime", .double(serverTime))]))
    }

    /// A compact pong's text before its id, and between its id and its `serverTime`.
    private static var pongHead: StaticString { #"{"id":"# }
    private static var pongMiddle: StaticString { #","result":{"pong":true,"serverTime":"# }

    /// Appends the bytes of `pong(id: .integer(id), serverTime:)`'s frame to `buffer`
    /// without building its JSON: the same bytes as ``bytes`` gives for that message.
    public static func writePong(id: Int64, serverTime: Double, into buffer: inout [UInt8]) {
        writePong(id: id, serverTimeText: serverTimeText(serverTime), into: &buffer)
    }

    /// The same, with `serverTime` already written out by ``serverTimeText(_:)``: a
    /// server answering many pings within one millisecond writes the number once.
    public static func writePong(id: Int64, serverTimeText: [UInt8], into buffer: inout [UInt8]) {
        func append(_ text: StaticString) {
            buffer.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        append(pongHead)
        JSONValue.writeInteger(id, into: &buffer)
        append(pongMiddle)
        buffer.append(contentsOf: serverTimeText)
        append("}}")
    }

    /// Whether `bytes` are a pong as ``writePong(id:serverTimeText:into:)`` writes it:
    /// `{"id":N,"result":{"pong":true,"serverTime":T}}`, `N` an integer and `T` a
    /// number, nothing else. Recognised without a JSON tree.
    public static func isCompactPong(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let (head, middle) = (pongHead, pongMiddle)
        guard bytes.count > head.utf8CodeUnitCount + middle.utf8CodeUnitCount + 3,
              bytes.starts(with: UnsafeBufferPointer(start: head.utf8Start, count: head.utf8CodeUnitCount)),
              bytes[bytes.count - 2] == UInt8(ascii: "}"), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return false }
        var index = head.utf8CodeUnitCount
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digits = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[index...])
        guard index > digits, rest.starts(with: UnsafeBufferPointer(start: middle.utf8Start, count: middle.utf8CodeUnitCount)) else {
            return false
        }
        let number = rest.dropFirst(middle.utf8CodeUnitCount).dropLast(2)
        return !number.isEmpty && number.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        }
    }

    /// A pong's `serverTime` as its JSON writes it.
    public static func serverTimeText(_ serverTime: Double) -> [UInt8] {
        var text: [UInt8] = []
        JSONValue.double(serverTime).serialize(into: &text)
        return text
    }

    /// The reply to `users.get`.
    public static func user(id: RequestID, _ user: User) -> ServerMessage {
        .result(id: id, JSONObject([("user", user.json)]))
    }

    /// The reply to `users.list`; `next` is the cursor of the following page.
    public static func users(id: RequestID, _ users: [User], next: String?) -> ServerMessage {
        .result(id: id, JSONObject([("users", .array(users.map(\.json))),
                                    ("next", next.map { .string($0) } ?? .null)]))
    }

    public var json: JSONValue {
        switch self {
        case .result(let id, let result):
            .object(JSONObject([("id", id.json), ("result", .object(result))]))
        case .error(let id, let error):
            .object(JSONObject([("id", id?.json ?? .null), ("error", .object(JSONObject([
                ("errorCode", .string(error.code)), ("errorDescription", .string(error.description)),
            ])))]))
        case .userOnline(let user):
            .object(JSONObject([("event", "user.online"), ("user", user.json)]))
        case .userOffline(let user):
            .object(JSONObject([("event", "user.offline"), ("user", user.json)]))
        case .deviceKicked(let reason, let device, let platform):
            .object(JSONObject([("event", "device.kicked"), ("reason", .string(reason)),
                                ("byDeviceId", .string(device)), ("byPlatform", .string(platform.rawValue))]))
        }
    }

    /// The frame's bytes.
    public var bytes: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        json.serialize(into: &buffer)
        return buffer
    }

    /// Reads a server frame (the client's side of the protocol).
    public init?(json: JSONValue) {
        if let event = json["event"]?.stringValue {
            switch event {
            case "user.online", "user.offline":
                guard let user = json["user"].flatMap(User.init(json:)) else { return nil }
                self = event == "user.online" ? .userOnline(user) : .userOffline(user)
            case "device.kicked":
                self = .deviceKicked(reason: json["reason"]?.stringValue ?? "",
                                     byDeviceId: json["byDeviceId"]?.stringValue ?? "",
                                     byPlatform: json["byPlatform"]?.stringValue.flatMap(Platform.init) ?? .mobile)
            default:
                return nil
            }
            return
        }
        let id = json["id"].flatMap(RequestID.init(json:))
        if let error = json["error"] {
            self = .error(id: id, ChatError(code: error["errorCode"]?.stringValue ?? "",
                                            description: error["errorDescription"]?.stringValue ?? ""))
        } else if let id, let result = json["result"]?.objectValue {
            self = .result(id: id, result)
        } else {
            return nil
        }
    }
}
