/// Turns a text frame into a ``RequestEnvelope`` or a ``RequestRejection``.
///
/// Pure and total: every input gets one of the two, which the server answers with a
/// result or an error reply. Nothing here closes connections.
public enum RequestDecoder {
    /// Decodes one frame. `maxDepth` bounds JSON nesting.
    public static func decode(_ bytes: UnsafeRawBufferPointer,
                              maxDepth: Int = JSONParser.defaultMaxDepth) -> Result<RequestEnvelope, RequestRejection> {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, maxDepth: maxDepth)
        } catch {
            return .failure(RequestRejection(id: nil, error: ChatError(.badRequest, "Not valid JSON: \(error)")))
        }
        return decode(value)
    }

    /// Recognises a ping written exactly as `{"id":N,"op":"ping"}` (no spaces, `N` a
    /// non-negative integer without leading zeros) without building a JSON tree: the
    /// common case under load. Returns nil for anything else, which then goes through
    /// ``decode(_:maxDepth:)``; for the frames it accepts, the result is the same.
    public static func compactPing(_ bytes: UnsafeRawBufferPointer) -> RequestEnvelope? {
        compactPingID(bytes).map { RequestEnvelope(id: .integer($0), request: .ping) }
    }

    /// The id `N` of a ``compactPing(_:)``, without the envelope: all a pong needs.
    public static func compactPingID(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        let prefix: StaticString = #"{"id":"#, suffix: StaticString = #","op":"ping"}"#
        let count = bytes.count, head = prefix.utf8CodeUnitCount, tail = suffix.utf8CodeUnitCount
        guard count > head + tail, count <= head + tail + 18,
              matches(bytes, at: 0, prefix), matches(bytes, at: count - tail, suffix) else { return nil }
        let digits = bytes[head..<(count - tail)]
        guard digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { return nil }
            value = value &* 10 &+ Int64(digit &- UInt8(ascii: "0"))
        }
        return value
    }

    private static func matches(_ bytes: UnsafeRawBufferPointer, at start: Int, _ text: StaticString) -> Bool {
        let expected = text.utf8Start
        for i in 0..<text.utf8CodeUnitCount where bytes[start + i] != expected[i] { return false }
        return true
    }

    /// Decodes an already parsed value.
    public static func decode(_ value: JSONValue) -> Result<RequestEnvelope, RequestRejection> {
        guard let object = value.objectValue else {
            return .failure(RequestRejection(id: nil, error: ChatError(.badRequest, "A request must be a JSON object")))
        }
        guard let rawID = object["id"], let id = RequestID(json: rawID) else {
            return .failure(RequestRejection(id: nil, error: ChatError(.badRequest, "A request needs an id (string or integer)")))
        }
        do throws(ChatError) {
            return .success(RequestEnvelope(id: id, request: try request(from: object)))
        } catch {
            return .failure(RequestRejection(id: id, error: error))
        }
    }

    private static func request(from object: JSONObject) throws(ChatError) -> Request {
        guard let op = object["op"] else { throw ChatError(.invalidField, "Field 'op' is missing") }
        guard let name = op.stringValue else { throw ChatError(.invalidField, "Field 'op' must be a string") }
        let fields = Fields(object: object)
        switch name {
        case "login":
            let platformName = try fields.string("platform") ?? Platform.mobile.rawValue
            guard let platform = Platform(rawValue: platformName) else {
                throw ChatError(.invalidField, "Field 'platform' must be mobile, desktop or web")
            }
            var presence = PresenceSubscription.allUsers
            if let raw = object["presence"], !raw.isNull {
                guard let parsed = PresenceSubscription(json: raw) else {
                    throw ChatError(.invalidField, "Field 'presence' must be {\"mode\": all|friends|roles|none}")
                }
                presence = parsed
            }
            let login = LoginRequest(
                uid: try fields.string("uid"), authKey: try fields.string("authKey"),
                token: try fields.string("token"), deviceId: try fields.string("deviceId") ?? "default",
                platform: platform, presence: presence, reconnect: try fields.bool("reconnect") ?? false,
                reconnectKickEnable: try fields.bool("reconnectKickEnable") ?? false)
            guard login.uid != nil || login.token != nil else {
                throw ChatError(.invalidField, "login needs 'uid' or 'token'")
            }
            return .login(login)
        case "logout":
            return .logout
        case "ping":
            return .ping
        case "users.get":
            guard let uid = try fields.string("uid") else { throw ChatError(.invalidField, "Field 'uid' is missing") }
            return .getUser(uid: uid)
        case "users.list":
            var query = UserListQuery()
            if let status = try fields.string("status") {
                guard let parsed = UserStatus(rawValue: status) else {
                    throw ChatError(.invalidField, "Field 'status' must be online or offline")
                }
                query.status = parsed
            }
            if let limit = object["limit"], !limit.isNull {
                guard let value = limit.intValue, UserListQuery.limitRange.contains(Int(clamping: value)) else {
                    throw ChatError(.invalidLimit)
                }
                query.limit = Int(value)
            }
            query.cursor = try fields.string("cursor")
            return .listUsers(query)
        default:
            throw ChatError(.unknownOp, "Unknown operation '\(name.prefix(64))'")
        }
    }
}

/// Typed access to optional request fields; a present field of the wrong type is an error.
private struct Fields {
    let object: JSONObject

    func string(_ key: String) throws(ChatError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let string = value.stringValue else { throw ChatError(.invalidField, "Field '\(key)' must be a string") }
        return string
    }

    func bool(_ key: String) throws(ChatError) -> Bool? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw ChatError(.invalidField, "Field '\(key)' must be a boolean") }
        return flag
    }
}
