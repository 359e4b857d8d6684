import ChatProtocol
import ReferenceClient

/// Every SDK command in one table: its name, the same in a scenario step (`a.login: alice`,
/// docs/SCENARIOS.md) and on the driver protocol (`"cmd": "login"`, docs/DRIVER.md), and
/// how each of the two forms of its arguments reads into an ``SDKCommand``. A scenario
/// step is read once, when the file loads (``ScenarioReader``); a driver's command when
/// it arrives (``ReferenceDriver``). ``DriverCodec`` writes the driver form back.
///
/// The forms differ where the documents do: a scenario may write a bare value for the one
/// argument (`getUser: bob`) and leaves the app's auth key and the client's device out;
/// a driver command always spells out its `args`.
enum CommandTable {
    /// What the `client` step said about the device.
    struct Device: Sendable, Equatable {
        var deviceId: String
        var platform: Platform
    }

    /// One command and its two readers.
    struct Row: Sendable {
        let name: String
        /// The scenario form: the step's value, with the client's device (for `init`).
        let scenario: @Sendable (JSONValue, Device) throws(ScenarioError) -> SDKCommand
        /// The driver form: the command's `args`; the message says what is wrong.
        let driver: @Sendable (JSONValue) -> Result<SDKCommand, DriverError>
    }

    /// The fixtures' app auth key, used when a scenario does not give one.
    static let defaultAuthKey = "mockchat-dev-key"

    /// The rows, in the order the reference driver's hello lists them.
    static let rows: [Row] = [
        Row(name: "init", scenario: { arguments, device throws(ScenarioError) in .initialize(try settings(arguments, device: device)) },
            driver: driverSettings),
        Row(name: "login", scenario: { arguments, _ throws(ScenarioError) in
            if let uid = arguments.stringValue { return .login(uid: uid, authKey: defaultAuthKey) }
            if let token = arguments["token"]?.stringValue { return .loginWithToken(token) }
            guard let uid = arguments["uid"]?.stringValue else { throw ScenarioError("login takes a uid or {uid, authKey} or {token}") }
            return .login(uid: uid, authKey: arguments["authKey"]?.stringValue ?? defaultAuthKey)
        }, driver: { args in
            if let token = args["token"]?.stringValue { return .success(.loginWithToken(token)) }
            return need("login", "uid", args).map { .login(uid: $0, authKey: args["authKey"]?.stringValue ?? "") }
        }),
        plain("logout", .logout), plain("connect", .connect), plain("disconnect", .disconnect), plain("ping", .ping),
        plain("getLoggedInUser", .getLoggedInUser), plain("getConnectionStatus", .getConnectionStatus),
        plain("backgroundTaskEnabled", .backgroundTaskEnabled),
        Row(name: "getUser", scenario: { arguments, _ throws(ScenarioError) in
            guard let uid = arguments.stringValue ?? arguments["uid"]?.stringValue else { throw ScenarioError("getUser takes a uid") }
            return .getUser(uid: uid)
        }, driver: { args in need("getUser", "uid", args).map { .getUser(uid: $0) } }),
        Row(name: "fetchNext", scenario: { arguments, _ throws(ScenarioError) in
            var status: UserStatus?
            if let text = arguments["status"]?.stringValue {
                guard let parsed = UserStatus(rawValue: text) else { throw ScenarioError("status is online or offline") }
                status = parsed
            }
            // Invalid limits are passed through on purpose: the server must refuse them.
            let limit = arguments["limit"].map { $0.intValue.map { Int(clamping: $0) } ?? Int.min } ?? UserListQuery.defaultLimit
            return .fetchNext(request: arguments["request"]?.stringValue ?? "users", limit: limit, status: status)
        }, driver: { args in
            guard let limit = args["limit"]?.intValue else { return .failure(.badArguments("fetchNext needs 'limit'")) }
            let status = args["status"]?.stringValue.flatMap(UserStatus.init(rawValue:))
            return .success(.fetchNext(request: args["request"]?.stringValue ?? "users", limit: Int(clamping: limit), status: status))
        }),
        listener("addUserListener", SDKCommand.addUserListener), listener("removeUserListener", SDKCommand.removeUserListener),
        listener("addConnectionListener", SDKCommand.addConnectionListener),
        listener("removeConnectionListener", SDKCommand.removeConnectionListener),
        named("configureServices", key: "state", SDKCommand.configureServices,
              scenarioError: "configureServices takes willResignActive or didBackground",
              driverError: "configureServices needs 'state': willResignActive or didBackground"),
        plain("willResignActive", .willResignActive), plain("didBackground", .didBackground), plain("foreground", .foreground),
        named("network", key: "condition", SDKCommand.network, scenarioError: "network takes up, down or weak",
              driverError: "network needs 'condition': up, down or weak"),
        plain("relaunch", .relaunch),
    ] + deviceRows

    /// Names a scenario may use besides the rows' (`initialize` for `init`).
    static let scenarioAliases = ["initialize": "init"]

    private static let byName = Dictionary(uniqueKeysWithValues: rows.map { ($0.name, $0) })

    /// Every command name a scenario step may call, aliases beside their command.
    static let scenarioNames = rows.flatMap { row in
        [row.name] + scenarioAliases.filter { $0.value == row.name }.map(\.key)
    }

    /// A scenario step's command, read from its value.
    static func scenarioCommand(_ method: String, _ arguments: JSONValue, device: Device) throws(ScenarioError) -> SDKCommand {
        guard let row = byName[scenarioAliases[method] ?? method] else { throw ScenarioError("unknown client method '\(method)'") }
        return try row.scenario(arguments, device)
    }

    /// A driver command, read from its name and `args`.
    static func driverCommand(_ name: String, _ args: JSONValue) -> Result<SDKCommand, DriverError> {
        guard let row = byName[name] else { return .failure(.unknownCommand("no command '\(name)'")) }
        return row.driver(args)
    }

    /// A scenario's `presence: all | friends | none | [roles]` (for `init` and wire `login`).
    static func presence(_ value: JSONValue) throws(ScenarioError) -> PresenceSubscription {
        guard let subscription = PresenceSubscription(scenarioValue: value) else {
            throw ScenarioError("presence is all, friends, none or a list of role names")
        }
        return subscription
    }

    // MARK: Rows of one shape

    /// A command without arguments.
    private static func plain(_ name: String, _ command: SDKCommand) -> Row {
        Row(name: name, scenario: { _, _ in command }, driver: { _ in .success(command) })
    }

    /// A listener command: the listener's id, `listener` if a scenario leaves it out.
    private static func listener(_ name: String, _ make: @escaping @Sendable (String) -> SDKCommand) -> Row {
        Row(name: name, scenario: { arguments, _ in make(arguments.stringValue ?? "listener") },
            driver: { args in need(name, "listener", args).map(make) })
    }

    /// A command with one named value of a closed set: bare in a scenario, under `key` for a driver.
    private static func named<Value: RawRepresentable & Sendable>(
        _ name: String, key: String, _ make: @escaping @Sendable (Value) -> SDKCommand, scenarioError: String,
        driverError: String
    ) -> Row where Value.RawValue == String {
        Row(name: name, scenario: { arguments, _ throws(ScenarioError) in
            guard let value = arguments.stringValue.flatMap(Value.init(rawValue:)) else { throw ScenarioError(scenarioError) }
            return make(value)
        }, driver: { args in
            args[key]?.stringValue.flatMap(Value.init(rawValue:)).map { .success(make($0)) } ?? .failure(.badArguments(driverError))
        })
    }

    private static func need(_ name: String, _ key: String, _ args: JSONValue) -> Result<String, DriverError> {
        args[key]?.stringValue.map { .success($0) } ?? .failure(.badArguments("\(name) needs '\(key)' (a string)"))
    }

    // MARK: init

    /// `init` arguments in a scenario: autoEstablishSocketConnection, presence (all |
    /// friends | none | [roles]), region, reconnectKickEnable, deviceId, platform; each
    /// checked.
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

    /// `init` args from a driver, as ``DriverCodec`` writes them.
    private static func driverSettings(_ args: JSONValue) -> Result<SDKCommand, DriverError> {
        var settings = AppSettings(deviceId: args["deviceId"]?.stringValue ?? "device-1",
                                   platform: args["platform"]?.stringValue.flatMap(Platform.init(rawValue:)) ?? .mobile)
        settings.autoEstablishSocketConnection = args["autoEstablishSocketConnection"]?.boolValue
        settings.reconnectKickEnable = args["reconnectKickEnable"]?.boolValue
        settings.region = args["region"]?.stringValue ?? settings.region
        if let value = args["presence"] {
            guard let subscription = DriverCodec.presence(value) else {
                return .failure(.badArguments("presence is \"all\", \"friends\", \"none\" or {\"roles\": [...]}"))
            }
            settings.presence = subscription
        }
        return .success(.initialize(settings))
    }
}
