import ChatProtocol

/// The `latency` faults in force while a recording was made (docs/PROTOCOL.md, 12.7,
/// "Latency"). The server records a frame when it reads it, `ms` after the client sent
/// it; the replay, under the same fault, sends it that much earlier, so that the server
/// reads it at the recorded time again.
struct RecordedLatency {
    private struct Rule {
        var uid: String?
        var deviceId: String?
        var ms: Int64
        /// When it was set: nothing was sent earlier under it.
        var since: Int64
    }

    private var rules: [Rule] = []

    /// Follows a control request: a `latency` fault set or removed, every fault cleared.
    mutating func note(method: String, path: String, body: JSONValue, at: Int64) {
        if path == "/control/reset" || (method == "DELETE" && path == "/control/faults") {
            rules = []
            return
        }
        guard path == "/control/faults", body["fault"]?.stringValue == "latency" else { return }
        let uid = body["uid"]?.stringValue, deviceId = body["deviceId"]?.stringValue
        rules.removeAll { $0.uid == uid && $0.deviceId == deviceId }
        if body["enabled"]?.boolValue != false, let ms = body["ms"]?.intValue {
            rules.append(Rule(uid: uid, deviceId: deviceId, ms: ms, since: at))
        }
    }

    /// When the client sent what the server read at `at`: `ms` earlier under the last
    /// matching latency (one without a selector matches every connection), never before
    /// the latency was set.
    func sent(readAt at: Int64, uid: String?, deviceId: String?) -> Int64 {
        guard let rule = rules.last(where: { rule in
            (rule.uid == nil || rule.uid == uid) && (rule.deviceId == nil || rule.deviceId == deviceId)
        }) else { return at }
        return max(at - rule.ms, rule.since)
    }
}
