import ChatProtocol
import MockChatCore
import ReferenceClient

/// The JSON forms of docs/DRIVER.md: commands with their `args`, call results and
/// events. The harness encodes commands and decodes results and events; the reference
/// driver does the opposite. One codec, so both sides agree by construction.
public enum DriverCodec {
    // MARK: Commands

    /// The protocol name and `args` of a command.
    public static func encode(_ command: SDKCommand) -> (name: String, args: JSONValue) {
        switch command {
        case .initialize(let settings):
            var args = JSONObject()
            if let auto = settings.autoEstablishSocketConnection { args["autoEstablishSocketConnection"] = .bool(auto) }
            args["presence"] = presence(settings.presence)
            args["region"] = .string(settings.region)
            if let kick = settings.reconnectKickEnable { args["reconnectKickEnable"] = .bool(kick) }
            args["deviceId"] = .string(settings.deviceId)
            args["platform"] = .string(settings.platform.rawValue)
            return ("init", .object(args))
        case .login(let uid, let authKey): return ("login", ["uid": .string(uid), "authKey": .string(authKey)])
        case .loginWithToken(let token): return ("login", ["token": .string(token)])
        case .logout: return ("logout", [:])
        case .getLoggedInUser: return ("getLoggedInUser", [:])
        case .connect: return ("connect", [:])
        case .disconnect: return ("disconnect", [:])
        case .ping: return ("ping", [:])
        case .getUser(let uid): return ("getUser", ["uid": .string(uid)])
        case .fetchNext(let request, let limit, let status):
            var args: JSONObject = JSONObject([("request", .string(request)), ("limit", .integer(Int64(limit)))])
            if let status { args["status"] = .string(status.rawValue) }
            return ("fetchNext", .object(args))
        case .addUserListener(let id): return ("addUserListener", ["listener": .string(id)])
        case .removeUserListener(let id): return ("removeUserListener", ["listener": .string(id)])
        case .addConnectionListener(let id): return ("addConnectionListener", ["listener": .string(id)])
        case .removeConnectionListener(let id): return ("removeConnectionListener", ["listener": .string(id)])
        case .getConnectionStatus: return ("getConnectionStatus", [:])
        case .backgroundTaskEnabled: return ("backgroundTaskEnabled", [:])
        case .configureServices(let state): return ("configureServices", ["state": .string(state.rawValue)])
        case .willResignActive: return ("willResignActive", [:])
        case .didBackground: return ("didBackground", [:])
        case .foreground: return ("foreground", [:])
        case .network(let condition): return ("network", ["condition": .string(condition.rawValue)])
        case .relaunch: return ("relaunch", [:])
        case .device(.dnsFailure(let attempts)):
            return ("dns", ["fail": attempts.map { .integer(Int64($0)) } ?? .bool(true)])
        case .device(.sleep(let milliseconds)): return ("sleep", ["ms": .integer(milliseconds)])
        case .device(.throttle(let period)): return ("throttle", ["periodMs": .integer(period)])
        case .device(.networkChange): return ("networkChange", [:])
        }
    }

    /// A command from its protocol name and `args`; the message says what is wrong.
    public static func decode(_ name: String, _ args: JSONValue) -> Result<SDKCommand, DriverError> {
        func text(_ key: String) -> String? { args[key]?.stringValue }
        func need(_ key: String) -> Result<String, DriverError> {
            text(key).map { .success($0) } ?? .failure(.badArguments("\(name) needs '\(key)' (a string)"))
        }
        switch name {
        case "init":
            var settings = AppSettings(deviceId: text("deviceId") ?? "device-1",
                                       platform: text("platform").flatMap(Platform.init(rawValue:)) ?? .mobile)
            settings.autoEstablishSocketConnection = args["autoEstablishSocketConnection"]?.boolValue
            settings.reconnectKickEnable = args["reconnectKickEnable"]?.boolValue
            settings.region = text("region") ?? settings.region
            if let value = args["presence"] {
                guard let subscription = presence(value) else {
                    return .failure(.badArguments("presence is \"all\", \"friends\", \"none\" or {\"roles\": [...]}"))
                }
                settings.presence = subscription
            }
            return .success(.initialize(settings))
        case "login":
            if let token = text("token") { return .success(.loginWithToken(token)) }
            return need("uid").map { .login(uid: $0, authKey: text("authKey") ?? "") }
        case "logout": return .success(.logout)
        case "getLoggedInUser": return .success(.getLoggedInUser)
        case "connect": return .success(.connect)
        case "disconnect": return .success(.disconnect)
        case "ping": return .success(.ping)
        case "getUser": return need("uid").map { .getUser(uid: $0) }
        case "fetchNext":
            guard let limit = args["limit"]?.intValue else { return .failure(.badArguments("fetchNext needs 'limit'")) }
            let status = text("status").flatMap(UserStatus.init(rawValue:))
            return .success(.fetchNext(request: text("request") ?? "users", limit: Int(clamping: limit), status: status))
        case "addUserListener": return need("listener").map { .addUserListener($0) }
        case "removeUserListener": return need("listener").map { .removeUserListener($0) }
        case "addConnectionListener": return need("listener").map { .addConnectionListener($0) }
        case "removeConnectionListener": return need("listener").map { .removeConnectionListener($0) }
        case "getConnectionStatus": return .success(.getConnectionStatus)
        case "backgroundTaskEnabled": return .success(.backgroundTaskEnabled)
        case "configureServices":
            guard let state = text("state").flatMap(ApplicationState.init(rawValue:)) else {
                return .failure(.badArguments("configureServices needs 'state': willResignActive or didBackground"))
            }
            return .success(.configureServices(state))
        case "willResignActive": return .success(.willResignActive)
        case "didBackground": return .success(.didBackground)
        case "foreground": return .success(.foreground)
        case "network":
            guard let condition = text("condition").flatMap(NetworkCondition.init(rawValue:)) else {
                return .failure(.badArguments("network needs 'condition': up, down or weak"))
            }
            return .success(.network(condition))
        case "relaunch": return .success(.relaunch)
        case "dns", "sleep", "throttle", "networkChange": return deviceEvent(name, args).map { .device($0) }
        default: return .failure(.unknownCommand("no command '\(name)'"))
        }
    }

    /// Every command name of protocol v1 that maps to an SDK call or environment change.
    public static let sdkCommands = [
        "init", "login", "logout", "connect", "disconnect", "ping", "getLoggedInUser", "getConnectionStatus",
        "backgroundTaskEnabled", "getUser", "fetchNext", "addUserListener", "removeUserListener",
        "addConnectionListener", "removeConnectionListener", "configureServices", "willResignActive",
        "didBackground", "foreground", "network", "relaunch", "dns", "sleep", "throttle", "networkChange",
    ]

    /// A device event's `args`: `dns {"fail": N | true | false}`, `sleep {"ms": N}`,
    /// `throttle {"periodMs": N}` (0 ends it), `networkChange {}`. Every key is checked.
    static func deviceEvent(_ name: String, _ args: JSONValue) -> Result<DeviceEvent, DriverError> {
        let keys: [String: String] = ["dns": "fail", "sleep": "ms", "throttle": "periodMs"]
        guard let object = args.objectValue else { return .failure(.badArguments("\(name) needs an object of args")) }
        let allowed = keys[name].map { [$0] } ?? []
        if let stray = object.keys.first(where: { !allowed.contains($0) }) {
            return .failure(.badArguments("\(name) takes no '\(stray)'" + (allowed.isEmpty ? "" : ", only '\(allowed[0])'")))
        }
        func integer(_ key: String, _ range: ClosedRange<Int64>) -> Result<Int64, DriverError> {
            guard let value = args[key]?.intValue, range.contains(value) else {
                return .failure(.badArguments("\(name) needs '\(key)': an integer from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(value)
        }
        switch name {
        case "dns":
            if let flag = args["fail"]?.boolValue { return .success(.dnsFailure(attempts: flag ? nil : 0)) }
            return integer("fail", 0...1_000_000).map { .dnsFailure(attempts: Int($0)) }
        case "sleep": return integer("ms", 1...DeviceEvent.maxSleepMilliseconds).map { .sleep(milliseconds: $0) }
        case "throttle": return integer("periodMs", 0...DeviceEvent.maxThrottleMilliseconds).map { .throttle(periodMilliseconds: $0) }
        default: return .success(.networkChange)
        }
    }

    static func presence(_ subscription: PresenceSubscription) -> JSONValue {
        switch subscription {
        case .allUsers: "all"
        case .friends: "friends"
        case .none: "none"
        case .roles(let roles): ["roles": .array(roles.map { .string($0) })]
        }
    }

    static func presence(_ value: JSONValue) -> PresenceSubscription? {
        switch value.stringValue {
        case "all": return .allUsers
        case "friends": return .friends
        case "none": return PresenceSubscription.none
        default:
            // `{"roles": [...]}`: only a list, read as the scenario form reads one.
            guard let roles = value["roles"], roles.arrayValue != nil else { return nil }
            return PresenceSubscription(scenarioValue: roles)
        }
    }

    // MARK: Results

    public static func encode(_ result: CallResult) -> JSONValue {
        switch result {
        case .failure(let error):
            return ["ok": false, "error": ["code": .string(error.code), "description": .string(error.description)]]
        case .success(let value):
            switch value {
            case .none: return ["ok": true]
            case .user(let user): return ["ok": true, "user": user.json]
            case .users(let page):
                return ["ok": true, "users": .array(page.users.map(\.json)), "next": page.next.map { .string($0) } ?? .null]
            case .status(let status): return ["ok": true, "status": .string(status.rawValue)]
            case .flag(let flag): return ["ok": true, "flag": .bool(flag)]
            }
        }
    }

    public static func decodeResult(_ json: JSONValue) -> CallResult? {
        guard let ok = json["ok"]?.boolValue else { return nil }
        guard ok else {
            guard let code = json["error"]?["code"]?.stringValue else { return nil }
            return .failure(ChatError(code: code, description: json["error"]?["description"]?.stringValue ?? ""))
        }
        if let user = json["user"] {
            return User(json: user).map { .success(.user($0)) }
        }
        if let users = json["users"]?.arrayValue {
            let page = users.compactMap(User.init(json:))
            guard page.count == users.count else { return nil }
            return .success(.users(UsersPage(users: page, next: json["next"]?.stringValue)))
        }
        if let status = json["status"] {
            return status.stringValue.flatMap(ConnectionStatus.init(rawValue:)).map { .success(.status($0)) }
        }
        if let flag = json["flag"] { return flag.boolValue.map { .success(.flag($0)) } }
        return .success(.none)
    }

    // MARK: Events

    /// The events a driver reports for one observation of the reference client: a
    /// connection event is followed by one `connectionListener` event per listener called.
    public static func events(_ observation: ClientObservation) -> [JSONValue] {
        let header = JSONObject([("type", "event"), ("client", .string(observation.client)),
                                 ("at", .integer(observation.at.milliseconds))])
        var event = header
        switch observation.event {
        case .socketOpening:
            event["event"] = "socketOpening"
        case .connection(let connection, let listeners):
            event["event"] = "connection"
            event["name"] = .string(connection.name)
            switch connection {
            case .kicked(let reason): event["reason"] = .string(reason)
            case .error(let error): event["error"] = ["code": .string(error.code), "description": .string(error.description)]
            default: break
            }
            event["listeners"] = .array(listeners.map { .string($0) })
            return [.object(event)] + listeners.map { listener in
                var call = header
                call["event"] = "connectionListener"
                call["listener"] = .string(listener)
                call["name"] = .string(connection.name)
                return .object(call)
            }
        case .user(let listener, let change, let user):
            event["event"] = "presence"
            event["listener"] = .string(listener)
            event["change"] = .string(change.rawValue)
            event["user"] = user.json
        default:
            return []
        }
        return [.object(event)]
    }
}

/// A protocol-level error a driver answers with (`ok: false`).
public enum DriverError: Error, Equatable {
    case unknownCommand(String)
    case unsupported(String)
    case badArguments(String)
    case unknownClient(String)
    case failed(String)

    /// `{"code": ..., "message": ...}`.
    public var json: JSONValue {
        let (code, message): (String, String) = switch self {
        case .unknownCommand(let m): ("unknown-command", m)
        case .unsupported(let m): ("unsupported", m)
        case .badArguments(let m): ("bad-arguments", m)
        case .unknownClient(let m): ("unknown-client", m)
        case .failed(let m): ("failed", m)
        }
        return ["code": .string(code), "message": .string(message)]
    }
}
