import ChatProtocol

/// Predicts the server's reply to one request from the rules of docs/PROTOCOL.md
/// (§2 envelopes, §3 session states, §4 operations, §10 error catalogue), written
/// apart from the server's `RequestDecoder`.
///
/// The order of checks: an envelope that is not a request (not an object, nesting
/// deeper than 32, `id` missing or not a string or integer) gets `ERR_BAD_REQUEST`
/// with `"id": null`; then the op (`ERR_INVALID_FIELD` when missing or not a string,
/// `ERR_UNKNOWN_OP`); then the op's fields (`ERR_INVALID_FIELD`, `ERR_INVALID_LIMIT`);
/// then the session state (`ERR_NOT_LOGGED_IN`, `ERR_ALREADY_LOGGED_IN`); then the
/// operation itself. Where two checks could both apply and the contract does not
/// order them, every code they could give is accepted.
enum RequestOracle {
    /// What the session is when the request arrives.
    enum Session: Sendable, Equatable {
        case awaitingLogin
        case loggedIn(uid: String)
    }

    /// The expected answer.
    enum Outcome: Sendable, Equatable {
        /// An error with one of these codes.
        case error(Set<String>)
        /// A result; for a login, the uid that logs in.
        case result(op: String, uid: String?)
        /// Any documented answer (the request's shape is not known).
        case any
    }

    struct Prediction: Sendable, Equatable {
        var outcome: Outcome
        /// The id the reply must carry back, when the request had a valid one.
        var id: JSONValue?
        /// The request's op, when it has one.
        var op: String?
    }

    static let maxDepth = 32
    static let knownOps: Set<String> = ["login", "logout", "ping", "users.get", "users.list"]

    /// The prediction for a request whose JSON value is known.
    static func predict(_ request: JSONValue, session: Session, roster: Roster, authKey: String) -> Prediction {
        var prediction = decide(request, session: session, roster: roster, authKey: authKey)
        if RequestOracle.depth(request) <= maxDepth { prediction.op = request["op"]?.stringValue }
        return prediction
    }

    private static func decide(_ request: JSONValue, session: Session, roster: Roster, authKey: String) -> Prediction {
        guard depth(request) <= maxDepth, let object = request.objectValue else {
            return Prediction(outcome: .error([ErrorCode.badRequest.rawValue]), id: nil)
        }
        let id: JSONValue?
        switch object["id"] {
        case .integer?, .string?: id = object["id"]
        default: id = nil
        }
        var codes: Set<String> = []
        if id == nil { codes.insert(ErrorCode.badRequest.rawValue) }
        guard let op = object["op"]?.stringValue else {
            // Both the id and the op are wrong: the contract does not say which is checked first.
            codes.insert(ErrorCode.invalidField.rawValue)
            return Prediction(outcome: .error(codes), id: id)
        }
        guard id != nil else { return Prediction(outcome: .error(codes), id: nil) }
        guard knownOps.contains(op) else { return Prediction(outcome: .error([ErrorCode.unknownOp.rawValue]), id: id) }
        let fieldErrors = fieldErrors(op, object)
        if !fieldErrors.isEmpty { return Prediction(outcome: .error(fieldErrors), id: id) }
        switch (op, session) {
        case ("login", .loggedIn):
            return Prediction(outcome: .error([ErrorCode.alreadyLoggedIn.rawValue]), id: id)
        case ("login", .awaitingLogin):
            return Prediction(outcome: login(object, roster: roster, authKey: authKey), id: id)
        case (_, .awaitingLogin):
            return Prediction(outcome: .error([ErrorCode.notLoggedIn.rawValue]), id: id)
        case ("users.get", .loggedIn):
            let uid = object["uid"]?.stringValue ?? ""
            return Prediction(outcome: roster.exists(uid) ? .result(op: op, uid: nil)
                                                            : .error([ErrorCode.uidNotFound.rawValue]), id: id)
        case ("users.list", .loggedIn):
            if let cursor = object["cursor"]?.stringValue, !cursor.hasPrefix("after:") {
                return Prediction(outcome: .error([ErrorCode.invalidCursor.rawValue]), id: id)
            }
            return Prediction(outcome: .result(op: op, uid: nil), id: id)
        default:
            return Prediction(outcome: .result(op: op, uid: nil), id: id)
        }
    }

    /// Nesting depth: a scalar is 0, an array or object one more than its deepest member.
    static func depth(_ value: JSONValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(depth).max() ?? 0)
        case .object(let object): 1 + (object.map { depth($0.value) }.max() ?? 0)
        default: 0
        }
    }

    /// Decoding errors of the op's fields (§4; §18: `null` counts as absent for every
    /// optional field, `presence` and `limit` included).
    private static func fieldErrors(_ op: String, _ object: JSONObject) -> Set<String> {
        let invalid = ErrorCode.invalidField.rawValue
        var codes: Set<String> = []
        func string(_ key: String) -> Bool { object[key].map { $0.isNull || $0.stringValue != nil } ?? true }
        func bool(_ key: String) -> Bool { object[key].map { $0.isNull || $0.boolValue != nil } ?? true }
        func present(_ key: String) -> Bool { object[key].map { !$0.isNull } ?? false }
        switch op {
        case "login":
            for key in ["uid", "authKey", "token", "deviceId", "platform"] where !string(key) { codes.insert(invalid) }
            for key in ["reconnect", "reconnectKickEnable"] where !bool(key) { codes.insert(invalid) }
            if let platform = object["platform"]?.stringValue, !["mobile", "desktop", "web"].contains(platform) {
                codes.insert(invalid)
            }
            if let presence = object["presence"], !presence.isNull, !validPresence(presence) { codes.insert(invalid) }
            if !present("uid") && !present("token") { codes.insert(invalid) }
        case "users.get":
            if object["uid"]?.stringValue == nil { codes.insert(invalid) }
        case "users.list":
            if !string("status") { codes.insert(invalid) }
            if let status = object["status"]?.stringValue, status != "online", status != "offline" { codes.insert(invalid) }
            if !string("cursor") { codes.insert(invalid) }
            if let limit = object["limit"], !limit.isNull {
                if limit.intValue.map({ !(1...100).contains($0) }) ?? true { codes.insert(ErrorCode.invalidLimit.rawValue) }
            }
        default:
            break
        }
        return codes
    }

    /// `{"mode": all|friends|none}` or `{"mode": "roles", "roles": [strings]}`.
    private static func validPresence(_ value: JSONValue) -> Bool {
        switch value["mode"]?.stringValue {
        case "all", "friends", "none": return true
        case "roles": return value["roles"]?.arrayValue.map { $0.allSatisfy { $0.stringValue != nil } } ?? false
        default: return false
        }
    }

    /// §4.1 authentication: a token decides the user; without one the key is checked
    /// before the uid (§18). Device policy never refuses the fuzzer's logins: no other
    /// connection of those users is online.
    private static func login(_ object: JSONObject, roster: Roster, authKey: String) -> Outcome {
        let uid = object["uid"]?.stringValue
        let user: String
        if let token = object["token"]?.stringValue {
            // Fixture tokens are `<uid>-token`.
            let owner = token.hasSuffix("-token") ? String(token.dropLast("-token".count)) : ""
            guard roster.exists(owner), uid == nil || uid == owner else { return .error([ErrorCode.authFailed.rawValue]) }
            user = owner
        } else {
            guard object["authKey"]?.stringValue == authKey else { return .error([ErrorCode.authFailed.rawValue]) }
            guard let uid, roster.exists(uid) else { return .error([ErrorCode.uidNotFound.rawValue]) }
            user = uid
        }
        guard !roster.isDeactivated(user) else { return .error([ErrorCode.userDeactivated.rawValue]) }
        return .result(op: "login", uid: user)
    }
}
