import ChatProtocol
import ReferenceClient

/// Turns a scenario's `client.method: arguments` into an ``SDKCommand``.
///
/// Method names follow the SDK documents (`init`, `login`, `connect`, `ping`,
/// `getUser`, `fetchNext`, `configureServices`, ...); lifecycle and network changes
/// are methods of the client too (`didBackground`, `network: down`).
enum CommandBuilder {
    /// What the `client` step said about the device.
    struct Device {
        var deviceId: String
        var platform: Platform
    }

    static func command(_ method: String, _ arguments: JSONValue, device: Device) throws(ScenarioError) -> SDKCommand {
        switch method {
        case "init", "initialize":
            return .initialize(try settings(arguments, device: device))
        case "login":
            if let uid = arguments.stringValue { return .login(uid: uid, authKey: defaultAuthKey) }
            if let token = arguments["token"]?.stringValue { return .loginWithToken(token) }
            guard let uid = arguments["uid"]?.stringValue else { throw ScenarioError("login takes a uid or {uid, authKey} or {token}") }
            return .login(uid: uid, authKey: arguments["authKey"]?.stringValue ?? defaultAuthKey)
        case "logout": return .logout
        case "getLoggedInUser": return .getLoggedInUser
        case "connect": return .connect
        case "disconnect": return .disconnect
        case "ping": return .ping
        case "getConnectionStatus": return .getConnectionStatus
        case "backgroundTaskEnabled": return .backgroundTaskEnabled
        case "getUser":
            guard let uid = arguments.stringValue ?? arguments["uid"]?.stringValue else { throw ScenarioError("getUser takes a uid") }
            return .getUser(uid: uid)
        case "fetchNext":
            var status: UserStatus?
            if let text = arguments["status"]?.stringValue {
                guard let parsed = UserStatus(rawValue: text) else { throw ScenarioError("status is online or offline") }
                status = parsed
            }
            // Invalid limits are passed through on purpose: the server must refuse them.
            let limit = arguments["limit"].map { $0.intValue.map { Int(clamping: $0) } ?? Int.min } ?? UserListQuery.defaultLimit
            return .fetchNext(request: arguments["request"]?.stringValue ?? "users", limit: limit, status: status)
        case "addUserListener": return .addUserListener(arguments.stringValue ?? "listener")
        case "removeUserListener": return .removeUserListener(arguments.stringValue ?? "listener")
        case "addConnectionListener": return .addConnectionListener(arguments.stringValue ?? "listener")
        case "removeConnectionListener": return .removeConnectionListener(arguments.stringValue ?? "listener")
        case "configureServices":
            guard let state = arguments.stringValue.flatMap(ApplicationState.init(rawValue:)) else {
                throw ScenarioError("configureServices takes willResignActive or didBackground")
            }
            return .configureServices(state)
        case "willResignActive": return .willResignActive
        case "didBackground": return .didBackground
        case "foreground": return .foreground
        case "relaunch": return .relaunch
        case "network":
            guard let condition = arguments.stringValue.flatMap(NetworkCondition.init(rawValue:)) else {
                throw ScenarioError("network takes up, down or weak")
            }
            return .network(condition)
        case "dns", "sleep", "throttle", "networkChange":
            return .device(try deviceEvent(method, arguments))
        default:
            throw ScenarioError("unknown client method '\(method)'")
        }
    }

    /// `dns: {fail: N | true | false}`, `sleep: 90s`, `throttle: 60s | off`, `networkChange: {}`.
    static func deviceEvent(_ method: String, _ arguments: JSONValue) throws(ScenarioError) -> DeviceEvent {
        switch method {
        case "dns":
            guard let object = arguments.objectValue, object.count == 1, let fail = object["fail"] else {
                throw ScenarioError("dns takes {fail: N} (the next N attempts), {fail: true} (until cleared) or {fail: false}")
            }
            if let flag = fail.boolValue { return .dnsFailure(attempts: flag ? nil : 0) }
            guard let count = fail.intValue, (1...1_000_000).contains(count) else {
                throw ScenarioError("dns fail is a number of attempts from 1 to 1000000, true or false")
            }
            return .dnsFailure(attempts: Int(count))
        case "sleep":
            let milliseconds = try ScenarioLoader.duration(arguments)
            guard (1...DeviceEvent.maxSleepMilliseconds).contains(milliseconds) else {
                throw ScenarioError("sleep is a duration from 1ms to 24h")
            }
            return .sleep(milliseconds: milliseconds)
        case "throttle":
            if arguments.stringValue == "off" || arguments.boolValue == false { return .throttle(periodMilliseconds: 0) }
            let period = try ScenarioLoader.duration(arguments)
            guard (1...DeviceEvent.maxThrottleMilliseconds).contains(period) else {
                throw ScenarioError("throttle is a period from 1ms to 1h, or off")
            }
            return .throttle(periodMilliseconds: period)
        default:
            guard arguments.isNull || arguments.objectValue?.isEmpty == true else {
                throw ScenarioError("networkChange takes no arguments: write {}")
            }
            return .networkChange
        }
    }

    /// The fixtures' app auth key, used when a scenario does not give one.
    static let defaultAuthKey = "mockchat-dev-key"

    /// `init` arguments: autoEstablishSocketConnection, presence (all | friends |
    /// none | [roles]), region, reconnectKickEnable, deviceId, platform.
    private static func settings(_ arguments: JSONValue, device: Device) throws(ScenarioError) -> AppSettings {
        var settings = AppSettings(deviceId: device.deviceId, platform: device.platform)
        guard let object = arguments.objectValue else { return settings }
        for (key, value) in object {
            switch key {
            case "autoEstablishSocketConnection":
                guard let flag = value.boolValue else { throw ScenarioError("autoEstablishSocketConnection is a boolean") }
                settings.autoEstablishSocketConnection = flag
            case "reconnectKickEnable":
                guard let flag = value.boolValue else { throw ScenarioError("reconnectKickEnable is a boolean") }
                settings.reconnectKickEnable = flag
            case "presence":
                settings.presence = try presence(value)
            case "region":
                settings.region = value.stringValue ?? settings.region
            case "deviceId":
                settings.deviceId = value.stringValue ?? settings.deviceId
            case "platform":
                guard let platform = value.stringValue.flatMap(Platform.init(rawValue:)) else {
                    throw ScenarioError("platform is mobile, desktop or web")
                }
                settings.platform = platform
            default:
                throw ScenarioError("unknown init setting '\(key)'")
            }
        }
        return settings
    }

    /// A scenario's `presence: all | friends | none | [roles]` (for `init` and wire `login`).
    static func presence(_ value: JSONValue) throws(ScenarioError) -> PresenceSubscription {
        guard let subscription = PresenceSubscription(scenarioValue: value) else {
            throw ScenarioError("presence is all, friends, none or a list of role names")
        }
        return subscription
    }
}
