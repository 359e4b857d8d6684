import ChatProtocol
import EventLoop

/// A bare protocol client for scenarios that speak the wire protocol directly
/// (`wire: NAME`): it sends exactly what a step says and records every frame.
///
/// Unlike the reference SDK it never pings, reconnects or reacts on its own, which
/// makes it the right tool for server-side rules, fuzzed histories and bad input.
final class WireClient {
    /// A frame as it arrived: when, and its JSON (a string when it was not JSON).
    typealias Frame = (time: Instant, message: JSONValue)

    let name: String
    private(set) var socket: WebSocket?
    private(set) var frames: [Frame] = []
    private(set) var closeInfo: WebSocket.CloseInfo?
    private(set) var failure: String?
    private var nextID: Int64 = 1

    init(name: String, loop: EventLoop, server: SocketAddress, seed: UInt64) {
        self.name = name
        WebSocketClient.connect(on: loop, to: server, seed: seed) { [self] result in
            switch result {
            case .failure(let error):
                failure = "\(error)"
            case .success(let socket):
                self.socket = socket
                socket.onText = { [unowned self] bytes in
                    let value = (try? JSONParser.parse(bytes)) ?? .string(String(decoding: bytes, as: UTF8.self))
                    frames.append((loop.clock.now, value))
                }
                socket.onClosed = { [unowned self] info in
                    closeInfo = info
                    self.socket = nil
                }
            }
        }
    }

    /// Whether the WebSocket is open.
    var isOpen: Bool { socket != nil }

    /// Runs one scenario method: `login`, `ping`, `send`, `sendText`, `close`, `drop`,
    /// `getUser`, `listUsers`, `logout`.
    func perform(_ method: String, _ arguments: JSONValue) throws(ScenarioError) {
        guard let socket else { throw ScenarioError("wire client '\(name)' is not connected (\(failure ?? "closed"))") }
        switch method {
        case "send":
            guard var object = arguments.objectValue else { throw ScenarioError("send takes a JSON mapping") }
            if object["id"] == nil { object["id"] = .integer(takeID()) }
            send(.object(object), on: socket)
        case "sendText":
            guard let text = arguments.stringValue else { throw ScenarioError("sendText takes a string") }
            socket.send(text: Array(text.utf8))
        case "close":
            socket.close(code: UInt16(clamping: arguments.intValue ?? 1000))
        case "drop":
            socket.drop()
        default:
            send(try request(method, arguments).json(id: .integer(takeID())), on: socket)
        }
    }

    private func request(_ method: String, _ arguments: JSONValue) throws(ScenarioError) -> Request {
        switch method {
        case "login":
            let uid = arguments.stringValue ?? arguments["uid"]?.stringValue
            let presence = try arguments["presence"].map(CommandTable.presence) ?? .allUsers
            let platform = arguments["platform"]?.stringValue.flatMap(Platform.init(rawValue:)) ?? .mobile
            return .login(LoginRequest(
                uid: uid, authKey: arguments["authKey"]?.stringValue ?? CommandTable.defaultAuthKey,
                token: arguments["token"]?.stringValue, deviceId: arguments["device"]?.stringValue ?? "\(name)-device",
                platform: platform, presence: presence, reconnect: arguments["reconnect"]?.boolValue ?? false,
                reconnectKickEnable: arguments["reconnectKickEnable"]?.boolValue ?? false))
        case "ping": return .ping
        case "logout": return .logout
        case "getUser":
            guard let uid = arguments.stringValue ?? arguments["uid"]?.stringValue else { throw ScenarioError("getUser takes a uid") }
            return .getUser(uid: uid)
        case "listUsers":
            let status = arguments["status"]?.stringValue.flatMap(UserStatus.init(rawValue:))
            return .listUsers(UserListQuery(status: status, limit: Int(arguments["limit"]?.intValue ?? 30),
                                            cursor: arguments["cursor"]?.stringValue))
        default:
            throw ScenarioError("unknown wire method '\(method)' (login, ping, logout, getUser, listUsers, send, sendText, close, drop)")
        }
    }

    private func takeID() -> Int64 {
        defer { nextID += 1 }
        return nextID
    }

    private func send(_ value: JSONValue, on socket: WebSocket) {
        var bytes: [UInt8] = []
        value.serialize(into: &bytes)
        socket.send(text: bytes)
    }
}
