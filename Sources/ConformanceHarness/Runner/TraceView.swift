import ChatProtocol
import MockChatServer

/// Reads the server trace as a scenario sees it: times in scenario seconds, the
/// client behind every connection, keep-alive traffic told apart, and connection ends.
///
/// Connections are the key: once any entry of a connection carries a uid and device
/// (its login reply, later frames), every entry of that connection is credited to
/// them, the login frame included; an empty uid gives way to the first one that is not.
public struct TraceView {
    let entries: [TraceLog.Entry]
    let origin: Double
    /// Connection id → (uid, device), from any entry that carries them.
    private(set) var owners: [String: (uid: String?, device: String?)] = [:]

    public init(entries: [TraceLog.Entry], origin: Double) {
        self.entries = entries
        self.origin = origin
        var claimed: [String: (uid: String?, device: String?)] = [:]
        for entry in entries {
            guard let connection = entry.connection?.description else { continue }
            let uid = entry.uid, device = entry.deviceId
            // An empty uid (a token login's claim, before the server knows the user) credits no one yet.
            if uid != nil || device != nil, owners[connection]?.uid?.isEmpty != false { owners[connection] = (uid, device) }
            // What a login frame claims, for connections the server never credited (a refused login).
            if claimed[connection] == nil, let frame = entry.frame, frame["op"]?.stringValue == "login" {
                claimed[connection] = (frame["uid"]?.stringValue, frame["deviceId"]?.stringValue)
            }
        }
        for (connection, claim) in claimed where owners[connection] == nil { owners[connection] = claim }
    }

    /// The uid the connection is credited to, by the rule above; nil when no entry names one.
    public func owner(of connection: String) -> String? { owners[connection]?.uid }

    func time(_ entry: TraceLog.Entry) -> Double { entry.time.seconds - origin }

    func uid(_ entry: TraceLog.Entry) -> String? {
        entry.uid ?? entry.connection.flatMap { owners[$0.description]?.uid }
    }

    func device(_ entry: TraceLog.Entry) -> String? {
        entry.deviceId ?? entry.connection.flatMap { owners[$0.description]?.device }
    }

    /// A ping request or its pong reply.
    static func isKeepAlive(_ entry: TraceLog.Entry) -> Bool {
        guard let frame = entry.frame else { return false }
        return frame["op"]?.stringValue == "ping" || frame["result"]?["pong"] != nil
    }

    /// One end per connection: who ended it, with which code (nil for a drop), when.
    public struct ConnectionEnd {
        public var connection: String
        /// `server`, `client` or `drop`.
        public var by: String
        /// The close code; null for a drop.
        public var code: JSONValue
        /// Seconds since the origin.
        public var at: Double
        public var uid: String?
        public var device: String?

        var json: JSONValue {
            var object = JSONObject([("by", .string(by)), ("code", code), ("at", .double((at * 1000).rounded() / 1000))])
            if let uid { object["uid"] = .string(uid) }
            if let device { object["device"] = .string(device) }
            return .object(object)
        }
    }

    /// Connection ends in order. The server closing (a `server closes` entry) makes
    /// `by: server` with its code; a drop fault or a close without a closing handshake
    /// makes `by: drop` with code null; otherwise the client closed, with its code.
    public func connectionEnds() -> [ConnectionEnd] {
        var ends: [ConnectionEnd] = []
        var index: [String: Int] = [:]
        var dropped: Set<String> = []
        for entry in entries {
            guard let connection = entry.connection?.description else { continue }
            let text = entry.text ?? ""
            if entry.kind == .fault, text.hasPrefix("drop") { dropped.insert(connection) }
            guard entry.kind == .close else { continue }
            if let existing = index[connection] {
                // The socket's own close after the server's decision: the end is already counted.
                _ = existing
                continue
            }
            let end: ConnectionEnd
            if text.hasPrefix("server closes") {
                end = ConnectionEnd(connection: connection, by: "server", code: code(entry), at: time(entry),
                                    uid: uid(entry), device: device(entry))
            } else if dropped.contains(connection) || entry.code == nil || !text.contains("closing handshake complete") {
                end = ConnectionEnd(connection: connection, by: "drop", code: .null, at: time(entry), uid: uid(entry),
                                    device: device(entry))
            } else {
                end = ConnectionEnd(connection: connection, by: "client", code: code(entry), at: time(entry),
                                    uid: uid(entry), device: device(entry))
            }
            index[connection] = ends.count
            ends.append(end)
        }
        return ends
    }

    /// A close entry's code as a JSON value; null without one.
    private func code(_ entry: TraceLog.Entry) -> JSONValue { entry.code.map { .integer(Int64($0)) } ?? .null }

    /// The entries up to `time` (scenario seconds), without keep-alive traffic, at most `limit`.
    func around(_ time: Double, limit: Int = 14) -> [String] {
        let upTo = entries.filter { self.time($0) <= time + 0.0005 && !Self.isKeepAlive($0) }
        return upTo.suffix(limit).map { entry in
            String(format: "%9.3fs ", self.time(entry)) + String(entry.description.prefix(260))
        }
    }
}
