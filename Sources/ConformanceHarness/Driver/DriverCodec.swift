import ChatProtocol
import MockChatCore
import ReferenceClient

/// The JSON forms of docs/DRIVER.md: commands with their `args`, call results and
/// events. The harness encodes commands and decodes results and events; the reference
/// driver does the opposite (it reads commands through ``CommandTable``, which holds
/// both forms of every command's arguments). One codec, so both sides agree by construction.
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
        case .device(.dnsFailure(let attempts, let kind)):
            var args: JSONObject = ["fail": attempts.map { .integer(Int64($0)) } ?? .bool(true)]
            if kind != .notFound { args["error"] = .string(kind.rawValue) }
            return ("dns", .object(args))
        case .device(.sleep(let milliseconds)): return ("sleep", ["ms": .integer(milliseconds)])
        case .device(.throttle(let period)): return ("throttle", ["periodMs": .integer(period)])
        case .device(.networkChange): return ("networkChange", [:])
        }
    }

    /// A command from its protocol name and `args`, read by its row of ``CommandTable``;
    /// the message says what is wrong.
    public static func decode(_ name: String, _ args: JSONValue) -> Result<SDKCommand, DriverError> {
        CommandTable.driverCommand(name, args)
    }

    /// Every command name of protocol v1 that maps to an SDK call or environment change.
    public static let sdkCommands = CommandTable.rows.map(\.name)

    static func presence(_ subscription: PresenceSubscription) -> JSONValue {
        switch subscription {
        case .allUsers: "all"
        case .friends: "friends"
        case .none: "none"
        case .roles(let roles): ["roles": .array(roles.map { .string($0) })]
        }
    }

    /// A driver's `presence`: `"all"`, `"friends"`, `"none"` or `{"roles": [...]}`.
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
