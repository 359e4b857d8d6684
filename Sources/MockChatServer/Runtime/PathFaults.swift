import ChatProtocol
import EventLoop

/// Latency on the whole TCP path of the matching connections (docs/PROTOCOL.md, 12.7,
/// "Latency"): every byte, the handshake, pings and closes, in both directions.
public struct LatencyRule: Sendable, Equatable {
    /// Empty: every connection, from its upgrade on; otherwise logged-in sessions.
    public var selector: FaultPlan.Selector
    /// Milliseconds each way.
    public var ms: Int64

    var json: JSONValue { .object(JSONObject([("selector", selector.json), ("ms", .integer(ms))])) }
}

/// A slow close for the matching connections (docs/PROTOCOL.md, 12.7, "Slow close").
public struct SlowCloseRule: Sendable, Equatable {
    public var selector: FaultPlan.Selector
    public var delays: WebSocket.CloseDelays

    var json: JSONValue {
        .object(JSONObject([("selector", selector.json), ("answerMs", .integer(delays.answerMs)),
                            ("holdMs", .integer(delays.holdMs))]))
    }
}

extension FaultPlan {
    /// The latency of a connection with these labels (nil: none), from the last
    /// matching rule.
    func latency(uid: String?, deviceId: String?) -> Int64? {
        latencies.last { $0.selector.matches(uid: uid, deviceId: deviceId) }?.ms
    }

    /// The latency of every new connection, from a rule without a selector.
    var latencyOfNewConnections: Int64? { latencies.last { $0.selector.isEmpty }?.ms }

    func closeDelays(uid: String?, deviceId: String?) -> WebSocket.CloseDelays? {
        slowCloses.last { $0.selector.matches(uid: uid, deviceId: deviceId) }?.delays
    }
}
