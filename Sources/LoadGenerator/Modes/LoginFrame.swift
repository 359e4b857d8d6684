import ChatProtocol

/// The `login` request every generator connection starts with.
public enum LoginFrame {
    /// `{"id":1,"op":"login",...}` as compact JSON.
    public static func bytes(uid: String, authKey: String, deviceId: String, platform: String = "desktop",
                             presence: PresenceSubscription) -> [UInt8] {
        let value: JSONValue = .object(JSONObject([
            ("id", .integer(1)), ("op", "login"), ("uid", .string(uid)), ("authKey", .string(authKey)),
            ("deviceId", .string(deviceId)), ("platform", .string(platform)),
            ("presence", presence.json),
        ]))
        var bytes: [UInt8] = []
        value.serialize(into: &bytes)
        return bytes
    }

    /// `{"id":N,"op":"ping"}`.
    public static func ping(id: Int) -> [UInt8] {
        Array("{\"id\":\(id),\"op\":\"ping\"}".utf8)
    }

    /// `{"id":N,"op":"logout"}`.
    public static func logout(id: Int) -> [UInt8] {
        Array("{\"id\":\(id),\"op\":\"logout\"}".utf8)
    }
}
