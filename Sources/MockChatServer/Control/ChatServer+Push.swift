import ChatProtocol
import EventLoop

/// `POST /control/push`: the server sends something of the caller's choosing to chosen
/// connections now (docs/PROTOCOL.md, 12.7a). Pushed frames and closes cross the
/// connection's outbound link like any other.
extension ChatServer {
    private static let pushPayloads = ["event", "frame", "bytes", "close"]
    private static let pushFields = ["connection", "uid", "deviceId"] + pushPayloads

    func push(_ body: JSONValue) throws(ControlError) -> JSONValue {
        let object = body.objectValue ?? JSONObject()
        for key in object.keys where !Self.pushFields.contains(key) {
            throw ControlError(400, "unknown field '\(key.prefix(64))' for push (known: \(Self.pushFields.joined(separator: ", ")))")
        }
        let payloads = Self.pushPayloads.filter { body[$0] != nil }
        guard payloads.count == 1, let kind = payloads.first else {
            throw ControlError(400, "push needs exactly one of 'event', 'frame', 'bytes' and 'close'")
        }
        let action = try PushAction(kind, body[kind]!)
        let targets = try targets(body, for: "push")
        var recorded = object
        if case .close(let frame, let code, let reason) = action {
            recorded["close"] = frame ? ["frame": true, "code": .integer(Int64(code)), "reason": .string(reason)] : ["frame": false]
        }
        trace.record(.control, time: loop.clock.now, uid: body["uid"]?.stringValue, deviceId: body["deviceId"]?.stringValue,
                     frame: .object(recorded), text: "push \(kind)")
        for id in targets { carryOut(action, to: id) }
        return ["ok": true, "connections": .array(targets.map { .string($0.description) })]
    }

    /// The connection named by `connection`, or the logged-in ones matching `uid`/`deviceId`
    /// (`route` names the request in errors: `push`, `kick`).
    func targets(_ body: JSONValue, for route: String) throws(ControlError) -> [ConnectionID] {
        for key in ["connection", "uid", "deviceId"] {
            guard let value = body[key] else { continue }
            guard let text = value.stringValue, !text.isEmpty else { throw ControlError(400, "'\(key)' must be a non-empty string") }
        }
        if let text = body["connection"]?.stringValue {
            guard body["uid"] == nil, body["deviceId"] == nil else {
                throw ControlError(400, "give 'connection' or 'uid'/'deviceId', not both")
            }
            guard let id = ConnectionID(text), socket(id) != nil else { throw ControlError(404, "no connection '\(text.prefix(64))'") }
            return [id]
        }
        let selector = FaultPlan.Selector(uid: body["uid"]?.stringValue, deviceId: body["deviceId"]?.stringValue)
        guard !selector.isEmpty else { throw ControlError(400, "\(route) needs 'connection', 'uid' or 'deviceId'") }
        let targets = connections(matching: selector)
        guard !targets.isEmpty else {
            throw ControlError(404, "no logged-in connection matches \(selector.json.serialized())")
        }
        return targets
    }

    private func carryOut(_ action: PushAction, to id: ConnectionID) {
        let label = tracedLabel(id)
        switch action {
        case .text(let bytes):
            let value = try? JSONParser.parse(bytes)
            send(value, text: value == nil ? String(decoding: bytes.prefix(1024), as: UTF8.self) : nil, bytes: bytes, to: id)
        case .bytes(let bytes):
            trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "push: \(bytes.count) raw bytes")
            deliver(to: id) { socket in socket.connection.write(bytes) }
        case .close(true, let code, let reason):
            trace.record(.close, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "server closes: \(reason.isEmpty ? "pushed close" : reason)", code: code)
            close(id, code: code, reason: reason)
        case .close(false, _, _):
            trace.record(.fault, time: loop.clock.now, connection: id, uid: label?.uid, deviceId: label?.deviceId,
                         text: "push: stream ended without a close frame")
            deliver(to: id) { socket in socket.endWithoutCloseFrame() }
        }
    }
}

/// What `POST /control/push` sends, checked.
enum PushAction {
    /// A text frame (an event is one too).
    case text([UInt8])
    /// Bytes written to the TCP stream as they are, outside WebSocket framing.
    case bytes([UInt8])
    /// With `frame`, a close frame with this code and reason; without, the TCP stream
    /// ends with no close frame.
    case close(frame: Bool, code: UInt16, reason: String)

    /// Codes a close frame may not carry (RFC 6455, section 7.4.1).
    static let unsendableCodes: Set<Int64> = [1004, 1005, 1006, 1015]

    init(_ kind: String, _ value: JSONValue) throws(ControlError) {
        switch kind {
        case "event":
            guard value["event"]?.stringValue != nil else {
                throw ControlError(400, "'event' must be an event object with an \"event\" name, e.g. {\"event\":\"user.online\",\"user\":{...}}")
            }
            self = .text(Array(value.serialized().utf8))
        case "frame":
            guard let text = value.stringValue else { throw ControlError(400, "'frame' must be a string: the text frame to send") }
            self = .text(Array(text.utf8))
        case "bytes":
            guard let hex = value.stringValue, let bytes = Self.hexBytes(hex), !bytes.isEmpty, bytes.count <= 65_536 else {
                throw ControlError(400, "'bytes' must be hex digits (spaces allowed), 1 to 65536 bytes, e.g. \"8a 00\"")
            }
            self = .bytes(bytes)
        default:
            guard let object = value.objectValue else { throw ControlError(400, "'close' must be an object: {code, reason, frame}") }
            for key in object.keys where !["code", "reason", "frame"].contains(key) {
                throw ControlError(400, "unknown field '\(key.prefix(64))' in 'close' (known: code, reason, frame)")
            }
            if let flag = value["frame"], flag.boolValue == nil { throw ControlError(400, "'close.frame' must be true or false") }
            guard value["frame"]?.boolValue ?? true else {
                guard value["code"] == nil, value["reason"] == nil else {
                    throw ControlError(400, "a close without a close frame carries no 'code' or 'reason'")
                }
                self = .close(frame: false, code: 0, reason: "")
                return
            }
            guard let code = value["code"]?.intValue, (1000...4999).contains(code), !Self.unsendableCodes.contains(code) else {
                throw ControlError(400, "'close.code' must be an integer from 1000 to 4999 other than 1004, 1005, 1006 and 1015")
            }
            if let reason = value["reason"], reason.stringValue == nil || reason.stringValue!.utf8.count > 123 {
                throw ControlError(400, "'close.reason' must be a string of at most 123 bytes")
            }
            self = .close(frame: true, code: UInt16(code), reason: value["reason"]?.stringValue ?? "")
        }
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = text.filter { !$0.isWhitespace }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
