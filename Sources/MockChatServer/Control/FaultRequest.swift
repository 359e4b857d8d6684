import ChatProtocol
import EventLoop
import MockChatCore

/// A `POST /control/faults` body, checked in full before anything changes
/// (docs/PROTOCOL.md, 12.7): unknown faults and fields, wrong types and numbers out
/// of range are refused with a message naming the field.
struct FaultRequest {
    enum Change {
        /// Reset these connections now (`connection` or the selector).
        case drop(connection: String?)
        case blackhole
        case refuseConnections
        case stall
        /// The shape for each direction; nil removes the rule.
        case link([LinkDirection], LinkShape?)
        /// A reply to add; nil removes the selector's replies for `op`.
        case reply(op: String, ScriptedReply?)
        /// A silence to set (or, not enabled, to lift).
        case silence(FaultPlan.Silence)
        /// A link for chosen frames to set (or, not enabled, to remove).
        case selectedLink(SelectedLink)
        /// How to answer new upgrades (nil when not enabled).
        case upgrade(UpgradeFault?)
        /// A cut to set (or, not enabled, to remove).
        case cut(CutFault)
        /// Latency each way on the selector's connections (nil removes it).
        case latency(Int64?)
        /// A slow close for the selector's connections (nil removes it).
        case slowClose(WebSocket.CloseDelays?)
    }

    static let names = ["drop", "blackhole", "refuseConnections", "stall", "delay", "link", "reply", "silence", "upgrade", "cut",
                        "latency", "slowClose"]
    static let common = ["fault", "uid", "deviceId", "enabled"]
    static let fields: [String: [String]] = [
        "drop": ["connection"], "blackhole": [], "refuseConnections": [], "stall": [], "delay": ["ms"],
        "link": ["direction", "delayMs", "jitterMs", "bytesPerSecond", "dropPercent", "sliceBytes", "closeFrame", "seed",
                 "frames", "hold", "duplicate", "times"],
        "reply": ["op", "match", "result", "error", "delayMs", "times"],
        "silence": ["connection", "newConnections"],
        "cut": ["afterBytes", "afterMs", "how"],
        "latency": ["ms"],
        "slowClose": ["answerMs", "holdMs"],
        "upgrade": ["status", "retryAfter", "body", "answer", "attempt", "sharePercent", "seed", "times"],
    ]

    let name: String
    let selector: FaultPlan.Selector
    let enabled: Bool
    let change: Change
    /// The body with its defaults written out: what the trace records.
    let recorded: JSONValue

    init(_ body: JSONValue) throws(ControlError) {
        guard let name = body["fault"]?.stringValue else {
            throw ControlError(400, "give 'fault': \(Self.names.joined(separator: ", "))")
        }
        guard let allowed = Self.fields[name] else {
            throw ControlError(400, "unknown fault '\(name.prefix(64))' (known: \(Self.names.joined(separator: ", ")))")
        }
        let object = body.objectValue ?? JSONObject()
        for key in object.keys where !Self.common.contains(key) && !allowed.contains(key) {
            throw ControlError(400, "unknown field '\(key.prefix(64))' for fault \(name) (known: \((Self.common + allowed).joined(separator: ", ")))")
        }
        for key in ["uid", "deviceId", "connection"] {
            guard let value = body[key] else { continue }
            guard let text = value.stringValue, !text.isEmpty else {
                throw ControlError(400, "'\(key)' must be a non-empty string")
            }
        }
        if let value = body["enabled"], value.boolValue == nil { throw ControlError(400, "'enabled' must be true or false") }
        self.name = name
        selector = FaultPlan.Selector(uid: body["uid"]?.stringValue, deviceId: body["deviceId"]?.stringValue)
        enabled = body["enabled"]?.boolValue ?? true
        var recorded = object
        switch name {
        case "drop":
            guard body["connection"] != nil || !selector.isEmpty else {
                throw ControlError(400, "drop needs 'connection', 'uid' or 'deviceId'")
            }
            change = .drop(connection: body["connection"]?.stringValue)
        case "blackhole":
            guard !selector.isEmpty else { throw ControlError(400, "blackhole needs 'uid' or 'deviceId'") }
            change = .blackhole
        case "cut":
            let bytes = try Self.integer(body, "afterBytes", in: 1...1_000_000_000).map(Int.init)
            let ms = try Self.integer(body, "afterMs", in: 0...3_600_000)
            guard !enabled || (bytes == nil) != (ms == nil) else {
                throw ControlError(400, "cut needs exactly one of 'afterBytes' (text-frame bytes both ways) and 'afterMs'")
            }
            var how = CutFault.How.reset
            if let value = body["how"] {
                guard let parsed = value.stringValue.flatMap(CutFault.How.init(rawValue:)) else {
                    throw ControlError(400, "'how' is reset, end (no close frame) or silence")
                }
                how = parsed
            }
            recorded["how"] = .string(how.rawValue)
            change = .cut(CutFault(selector: selector, afterBytes: bytes, afterMs: ms, how: how))
        case "upgrade":
            let fault = try Self.upgrade(body, selector: selector, enabled: enabled)
            if let fault { recorded["seed"] = .integer(Int64(bitPattern: fault.seed)) }
            change = .upgrade(fault)
        case "latency":
            let ms = try Self.integer(body, "ms", in: 1...60_000, what: enabled ? "latency needs 'ms', the delay each way" : nil)
            change = .latency(enabled ? ms : nil)
        case "slowClose":
            let answer = try Self.integer(body, "answerMs", in: 0...600_000) ?? 0
            let hold = try Self.integer(body, "holdMs", in: 0...600_000) ?? 0
            guard !enabled || answer > 0 || hold > 0 else {
                throw ControlError(400, "slowClose needs 'answerMs' (the peer's close answered late) or 'holdMs' (the TCP close held after the handshake), above 0")
            }
            recorded["answerMs"] = .integer(answer)
            recorded["holdMs"] = .integer(hold)
            change = .slowClose(enabled ? WebSocket.CloseDelays(answerMs: answer, holdMs: hold) : nil)
        case "refuseConnections", "stall":
            guard selector.isEmpty else {
                throw ControlError(400, "\(name) applies to every new connection; it takes no 'uid' or 'deviceId'")
            }
            change = name == "stall" ? .stall : .refuseConnections
        case "delay":
            let ms = try Self.integer(body, "ms", in: 0...3_600_000, what: "delay needs 'ms'")!
            change = .link([.outbound], enabled && ms > 0 ? LinkShape(delayMs: ms) : nil)
        case "link" where body["frames"] != nil:
            let rule = try Self.selectedLink(body, selector: selector, enabled: enabled)
            recorded["direction"] = .string(rule.direction.rawValue)
            if enabled { recorded["seed"] = .integer(Int64(bitPattern: rule.shape.seed)) }
            change = .selectedLink(rule)
        case "link":
            for key in ["hold", "duplicate", "times"] where body[key] != nil {
                throw ControlError(400, "'\(key)' applies to chosen frames: it needs 'frames'")
            }
            let (directions, shape) = try Self.link(body, enabled: enabled)
            recorded["direction"] = body["direction"] ?? "both"
            if enabled { recorded["seed"] = .integer(Int64(bitPattern: shape?.seed ?? 1)) }
            change = .link(directions, shape)
        case "silence":
            let hangs: Bool
            switch body["newConnections"].map({ $0.stringValue ?? "" }) {
            case nil, "hang": hangs = true
            case "pass": hangs = false
            default: throw ControlError(400, "'newConnections' is \"hang\" (new attempts are never answered) or \"pass\" (an interface change)")
            }
            if body["connection"] != nil, !selector.isEmpty {
                throw ControlError(400, "silence takes 'connection' or a selector ('uid', 'deviceId'), not both")
            }
            recorded["newConnections"] = .string(hangs ? "hang" : "pass")
            change = .silence(FaultPlan.Silence(selector: selector, connection: body["connection"]?.stringValue,
                                                hangsNewConnections: hangs))
        default:
            let (op, reply) = try Self.reply(body, selector: selector, enabled: enabled)
            change = .reply(op: op, reply)
        }
        self.recorded = .object(recorded)
    }

    /// An integer field in `range`, or nil when absent.
    static func integer(_ body: JSONValue, _ key: String, in range: ClosedRange<Int64>,
                        what: String? = nil) throws(ControlError) -> Int64? {
        guard let value = body[key] else {
            if let what { throw ControlError(400, "\(what), an integer from \(range.lowerBound) to \(range.upperBound)") }
            return nil
        }
        guard let number = value.intValue else {
            throw ControlError(400, "\(what.map { $0 + "," } ?? "'\(key)' must be") an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return try ControlError.checking { () throws(BoundedNumberError) in try BoundedNumber.check(number, "'\(key)'", in: range) }
    }

    private static func link(_ body: JSONValue, enabled: Bool) throws(ControlError) -> ([LinkDirection], LinkShape?) {
        var directions = LinkDirection.allCases
        if let value = body["direction"] {
            switch value.stringValue {
            case "in": directions = [.inbound]
            case "out": directions = [.outbound]
            case "both": break
            default: throw ControlError(400, "'direction' is in, out or both")
            }
        }
        let delay = try integer(body, "delayMs", in: 0...3_600_000) ?? 0
        let jitter = try integer(body, "jitterMs", in: 0...3_600_000) ?? 0
        guard jitter <= delay else {
            throw ControlError(400, "'jitterMs' (\(jitter)) must not exceed 'delayMs' (\(delay)): a frame cannot leave before it was sent")
        }
        let rate = try integer(body, "bytesPerSecond", in: 1...1_000_000_000) ?? 0
        let slice = try integer(body, "sliceBytes", in: 1...65_536) ?? 0
        if slice > 0, directions.contains(.inbound) {
            throw ControlError(400, "'sliceBytes' cuts the server's writes: it needs \"direction\": \"out\"")
        }
        var closeFrames = true
        if let value = body["closeFrame"] {
            guard let flag = value.boolValue else { throw ControlError(400, "'closeFrame' must be true or false") }
            guard flag || directions == [.outbound] else {
                throw ControlError(400, "'closeFrame' is about the server's closes: it needs \"direction\": \"out\"")
            }
            closeFrames = flag
        }
        let percent = try dropPercent(body)
        let seed = try seed(body)
        guard enabled else { return (directions, nil) }
        guard delay > 0 || rate > 0 || slice > 0 || percent > 0 || !closeFrames else {
            throw ControlError(400, "link needs at least one of 'delayMs', 'bytesPerSecond', 'sliceBytes', 'dropPercent', 'closeFrame' (or \"enabled\": false)")
        }
        return (directions, LinkShape(delayMs: delay, jitterMs: jitter, bytesPerSecond: Int(rate), dropPercent: percent,
                                      sliceBytes: Int(slice), closeFrames: closeFrames, seed: seed))
    }

    /// A percentage field (`dropPercent` unless named), 0 when absent.
    static func dropPercent(_ body: JSONValue, _ key: String = "dropPercent") throws(ControlError) -> Double {
        guard let value = body[key] else { return 0 }
        guard let number = value.doubleValue else { throw ControlError(400, "'\(key)' must be a number from 0 to 100") }
        return try ControlError.checking { () throws(BoundedNumberError) in
            try BoundedNumber.check(number, "'\(key)'", in: 0...100, unit: "percent")
        }
    }

    /// `seed`, 1 when absent.
    static func seed(_ body: JSONValue) throws(ControlError) -> UInt64 {
        guard let value = body["seed"] else { return 1 }
        guard let number = value.intValue else { throw ControlError(400, "'seed' must be an integer") }
        return UInt64(bitPattern: number)
    }

    private static func reply(_ body: JSONValue, selector: FaultPlan.Selector,
                              enabled: Bool) throws(ControlError) -> (String, ScriptedReply?) {
        guard let op = body["op"]?.stringValue, !op.isEmpty else {
            throw ControlError(400, "reply needs 'op', the request's op (for example \"ping\")")
        }
        guard enabled else { return (op, nil) }
        var fields = JSONObject()
        if let match = body["match"] {
            guard let object = match.objectValue else { throw ControlError(400, "'match' must be an object of request fields") }
            fields = object
        }
        let answer: (String, JSONValue)
        switch (body["result"], body["error"]) {
        case (let result?, nil):
            guard result.objectValue != nil else { throw ControlError(400, "'result' must be an object") }
            answer = ("result", result)
        case (nil, let error?):
            guard let code = error["errorCode"]?.stringValue, !code.isEmpty else {
                throw ControlError(400, "'error' needs 'errorCode', a string such as \"ERR_INTERNAL\"")
            }
            for key in error.objectValue?.keys ?? [] where key != "errorCode" && key != "errorDescription" {
                throw ControlError(400, "unknown field '\(key.prefix(64))' in 'error' (known: errorCode, errorDescription)")
            }
            if let text = error["errorDescription"], text.stringValue == nil {
                throw ControlError(400, "'errorDescription' must be a string")
            }
            answer = ("error", error)
        default:
            throw ControlError(400, "reply needs exactly one of 'result' and 'error'")
        }
        let delay = try integer(body, "delayMs", in: 0...3_600_000) ?? 0
        let times = try integer(body, "times", in: 1...1_000_000).map(Int.init)
        return (op, ScriptedReply(selector: selector, op: op, fields: fields, answer: answer, delayMs: delay, times: times))
    }
}
