import ChatProtocol
import MockChatCore

/// The app as the server is configured for it (`app.json`): credentials, timeouts and
/// device policy. Not the SDK's `AppSettings`, which is what an app passes to `init`.
public struct AppConfiguration: Sendable, Equatable {
    public var appId = "mockchat-local"
    public var region = "us"
    /// The key `login` must carry unless it uses a user's token.
    public var authKey = "mockchat-dev-key"
    /// A connection from which nothing arrives for this long is closed with 4002.
    public var heartbeatTimeoutMilliseconds: Int64 = 30_000
    /// A connection that has not logged in this long after its handshake is closed with
    /// 4010, so sockets that never log in cannot hold descriptors forever.
    public var loginTimeoutMilliseconds: Int64 = 10_000
    /// Mobile devices one user may have online at once (003: one).
    public var mobileDevicesPerUser = 1
    /// The console switch of 003 "Configure the reconnection kick strategy": only when on
    /// does a client's `reconnectKickEnable` take effect.
    public var clientKickControl = false

    public init() {}

    /// Reads `app.json`; absent fields keep their defaults.
    public init(json: JSONValue) throws(FixtureError) {
        self = try AppConfiguration().applying(json, as: "app settings")
    }

    /// These settings with the fields `overrides` (a partial `app.json`) carries replaced:
    /// the one way a scenario's or a control request's `app` changes them. A wrong value
    /// throws, naming its field; `what` names the whole in the error.
    public func applying(_ overrides: JSONValue, as what: String = "'app'") throws(FixtureError) -> AppConfiguration {
        guard let object = overrides.objectValue else { throw FixtureError("\(what) must be an object") }
        var settings = self
        try settings.apply(object)
        return settings
    }

    private mutating func apply(_ object: JSONObject) throws(FixtureError) {
        if let value = object["appId"] {
            guard let text = value.stringValue else { throw FixtureError("'appId' must be a string") }
            appId = text
        }
        if let value = object["region"] {
            guard let text = value.stringValue else { throw FixtureError("'region' must be a string") }
            region = text
        }
        if let value = object["authKey"] {
            guard let text = value.stringValue, !text.isEmpty else { throw FixtureError("'authKey' must be a non-empty string") }
            authKey = text
        }
        if let value = object["heartbeatTimeout"] {
            heartbeatTimeoutMilliseconds = try Self.milliseconds(value, "'heartbeatTimeout'")
        }
        if let value = object["loginTimeout"] {
            loginTimeoutMilliseconds = try Self.milliseconds(value, "'loginTimeout'")
        }
        if let value = object["devicePolicy"] {
            guard let count = value["mobileDevicesPerUser"]?.intValue, count >= 1, count <= 1000 else {
                throw FixtureError("'devicePolicy.mobileDevicesPerUser' must be an integer from 1 to 1000")
            }
            mobileDevicesPerUser = Int(count)
        }
        if let value = object["clientKickControl"] {
            guard let flag = value.boolValue else { throw FixtureError("'clientKickControl' must be a boolean") }
            clientKickControl = flag
        }
    }

    /// A timeout of one millisecond to one day, given in seconds.
    private static func milliseconds(_ value: JSONValue, _ field: String) throws(FixtureError) -> Int64 {
        guard let seconds = value.doubleValue else { throw FixtureError("\(field) must be a number of seconds, not \(value.typeName)") }
        do throws(BoundedNumberError) {
            return try BoundedNumber.milliseconds(seconds: seconds, field, in: 0.001...86_400)
        } catch {
            throw FixtureError(error.description)
        }
    }

    public var json: JSONValue {
        .object(JSONObject([
            ("appId", .string(appId)), ("region", .string(region)), ("authKey", .string(authKey)),
            ("heartbeatTimeout", .double(Double(heartbeatTimeoutMilliseconds) / 1000)),
            ("loginTimeout", .double(Double(loginTimeoutMilliseconds) / 1000)),
            ("devicePolicy", .object(JSONObject([("mobileDevicesPerUser", .integer(Int64(mobileDevicesPerUser)))]))),
            ("clientKickControl", .bool(clientKickControl)),
        ]))
    }
}
