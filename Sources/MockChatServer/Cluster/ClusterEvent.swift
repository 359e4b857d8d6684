import ChatProtocol

/// One message of the `mockchat:events` channel as it arrives: its place in the
/// channel's order (`seq`, numbered by the publishing script) and its event.
struct ClusterMessage: Equatable {
    let seq: Int64
    let event: ClusterEvent

    /// Decodes a message; nil (the bridge logs it) when it is not one of ours.
    init?(_ text: String) {
        guard let value = try? JSONParser.parse(text), let seq = value["seq"]?.intValue,
              let event = ClusterEvent(value) else { return nil }
        self.seq = seq
        self.event = event
    }

    init(seq: Int64, event: ClusterEvent) {
        self.seq = seq
        self.event = event
    }
}

/// One event of the `mockchat:events` channel (docs/CLUSTER.md).
package enum ClusterEvent: Equatable {
    case added(ClusterDevice)
    case removed(uid: String, field: String, lastActiveAt: Double)
    case kick(node: String, connection: String, reason: String, byDeviceId: String, byPlatform: Platform)
    case reset(node: String)

    /// Decodes a message's JSON; nil when it is not one of ours.
    init?(_ value: JSONValue) {
        guard let type = value["t"]?.stringValue else { return nil }
        func text(_ key: String) -> String? { value[key]?.stringValue }
        switch type {
        case "add":
            guard let uid = text("uid"), let node = text("node"), let connection = text("conn"),
                  let deviceId = text("deviceId"), let platform = text("platform").flatMap(Platform.init),
                  let since = value["since"]?.doubleValue else { return nil }
            self = .added(ClusterDevice(uid: uid, node: node, connection: connection, deviceId: deviceId, platform: platform,
                                        since: since))
        case "remove":
            guard let uid = text("uid"), let field = text("field"), let seconds = value["lastActiveAt"]?.doubleValue else { return nil }
            self = .removed(uid: uid, field: field, lastActiveAt: seconds)
        case "kick":
            guard let node = text("node"), let connection = text("conn"), let reason = text("reason"),
                  let by = text("byDeviceId"), let platform = text("byPlatform").flatMap(Platform.init) else { return nil }
            self = .kick(node: node, connection: connection, reason: reason, byDeviceId: by, byPlatform: platform)
        case "reset":
            guard let node = text("node") else { return nil }
            self = .reset(node: node)
        default:
            return nil
        }
    }

    /// The message as the bridge hands it to a script, which adds `seq` and publishes it.
    var message: String {
        let value: JSONValue
        switch self {
        case .added(let d):
            value = ["t": "add", "uid": .string(d.uid), "node": .string(d.node), "conn": .string(d.connection),
                     "deviceId": .string(d.deviceId), "platform": .string(d.platform.rawValue), "since": .double(d.since)]
        case .removed(let uid, let field, let seconds):
            value = ["t": "remove", "uid": .string(uid), "field": .string(field), "lastActiveAt": .double(seconds)]
        case .kick(let node, let connection, let reason, let by, let platform):
            value = ["t": "kick", "node": .string(node), "conn": .string(connection), "reason": .string(reason),
                     "byDeviceId": .string(by), "byPlatform": .string(platform.rawValue)]
        case .reset(let node):
            value = ["t": "reset", "node": .string(node)]
        }
        return value.serialized()
    }

    /// The device's stored value in its user's hash.
    package static func storedValue(_ device: ClusterDevice) -> String {
        JSONValue.object(JSONObject([("deviceId", .string(device.deviceId)),
                                     ("platform", .string(device.platform.rawValue)),
                                     ("since", .double(device.since))])).serialized()
    }

    /// A device from its user's hash entry (`node/connection` -> stored value).
    static func device(uid: String, field: String, stored: String) -> ClusterDevice? {
        guard let slash = field.firstIndex(of: "/"), let value = try? JSONParser.parse(stored),
              let deviceId = value["deviceId"]?.stringValue,
              let platform = value["platform"]?.stringValue.flatMap(Platform.init),
              let since = value["since"]?.doubleValue else { return nil }
        return ClusterDevice(uid: uid, node: String(field[..<slash]), connection: String(field[field.index(after: slash)...]),
                             deviceId: deviceId, platform: platform, since: since)
    }
}
