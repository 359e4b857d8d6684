import ChatProtocol

/// `POST /control/kick`: logged-in devices are kicked as a newer login would kick them,
/// with `device.kicked` and then a close with 4001 (docs/PROTOCOL.md, 12.7b).
extension ChatServer {
    private static let kickFields = ["connection", "uid", "deviceId", "reason", "byDeviceId", "byPlatform"]

    func kick(_ body: JSONValue) throws(ControlError) -> JSONValue {
        let object = body.objectValue ?? JSONObject()
        for key in object.keys where !Self.kickFields.contains(key) {
            throw ControlError(400, "unknown field '\(key.prefix(64))' for kick (known: \(Self.kickFields.joined(separator: ", ")))")
        }
        func text(_ key: String, default value: String) throws(ControlError) -> String {
            guard let field = body[key] else { return value }
            guard let string = field.stringValue, !string.isEmpty, string.utf8.count <= 123 else {
                throw ControlError(400, "'\(key)' must be a string of 1 to 123 bytes")
            }
            return string
        }
        let reason = try text("reason", default: "kicked by the control API")
        let byDeviceId = try text("byDeviceId", default: "mockchat-control")
        let platformName = try text("byPlatform", default: Platform.web.rawValue)
        guard let byPlatform = Platform(rawValue: platformName) else {
            throw ControlError(400, "'byPlatform' must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var kicked = try targets(body, for: "kick")
        kicked = kicked.filter { engine.session($0)?.stage == .loggedIn }
        guard !kicked.isEmpty else { throw ControlError(409, "connection '\(body["connection"]?.stringValue ?? "")' has not logged in") }
        trace.record(.control, time: loop.clock.now, uid: body["uid"]?.stringValue, deviceId: body["deviceId"]?.stringValue,
                     frame: body, text: "kick \(kicked.count) device\(kicked.count == 1 ? "" : "s")")
        for id in kicked {
            execute(engine.kick(id, reason: reason, byDeviceId: byDeviceId, byPlatform: byPlatform, now: loop.clock.now))
        }
        return ["ok": true, "connections": .array(kicked.map { .string($0.description) })]
    }
}
