import ChatProtocol

/// What tests read from server messages: ids, results, errors, pages.
extension ServerMessage {
    /// The id of a reply; nil for events and for errors without an id.
    public var requestID: RequestID? {
        switch self {
        case .result(let id, _): id
        case .error(let id, _): id
        default: nil
        }
    }

    public var isEvent: Bool {
        switch self {
        case .userOnline, .userOffline, .deviceKicked: true
        default: false
        }
    }

    /// The result object of a successful reply.
    public var resultObject: JSONObject? {
        if case .result(_, let object) = self { return object }
        return nil
    }

    /// The error code of a failed reply.
    public var errorCode: String? {
        if case .error(_, let error) = self { return error.code }
        return nil
    }

    /// The users of a `users.list` reply, by uid.
    public var listedUIDs: [String]? {
        resultObject?["users"]?.arrayValue?.compactMap { $0["uid"]?.stringValue }
    }

    /// The `next` cursor of a `users.list` reply (nil when null or absent).
    public var nextCursor: String? { resultObject?["next"]?.stringValue }

    /// The user of a `users.get` or `login` reply.
    public var resultUser: User? { resultObject?["user"].flatMap(User.init(json:)) }
}
