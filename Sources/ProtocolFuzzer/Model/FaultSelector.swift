import ChatProtocol

/// The targets of a fault: a uid, a device id or both (PROTOCOL.md §12.7).
public struct FaultSelector: Sendable, Equatable, Hashable {
    public var uid: String?
    public var deviceId: String?

    public init(uid: String? = nil, deviceId: String? = nil) {
        self.uid = uid
        self.deviceId = deviceId
    }

    /// Whether a logged-in connection of `uid` on `deviceId` is a target.
    func matches(uid: String, deviceId: String) -> Bool {
        (self.uid == nil || self.uid == uid) && (self.deviceId == nil || self.deviceId == deviceId)
    }

    /// The selector's fields, to merge into a `server.fault` body.
    var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = []
        if let uid { fields.append(("uid", .string(uid))) }
        if let deviceId { fields.append(("deviceId", .string(deviceId))) }
        return fields
    }
}
