import ChatProtocol
import EventLoop

/// A well-behaved client that stays logged in for the whole wire run (as `trent`,
/// on a desktop, subscribed to nobody) and must keep getting its pings answered
/// whatever the fuzzed connections do.
final class ControlClient {
    private(set) var socket: WebSocket?
    private(set) var replies: [JSONValue] = []
    private(set) var closed: WebSocket.CloseInfo?
    private var nextID = 1

    init(loop: EventLoop, server: SocketAddress, seed: UInt64) {
        WebSocketClient.connect(on: loop, to: server, seed: seed) { [self] result in
            guard case .success(let socket) = result else { return }
            self.socket = socket
            socket.onText = { [unowned self] bytes in
                if let value = try? JSONParser.parse(bytes) { replies.append(value) }
            }
            socket.onClosed = { [unowned self] info in
                closed = info
                self.socket = nil
            }
        }
    }

    var isOpen: Bool { socket != nil }

    /// Sends a request and returns its id.
    @discardableResult
    func send(_ fields: JSONObject) -> JSONValue {
        let id = JSONValue.string("control-\(nextID)")
        nextID += 1
        var request = fields
        request["id"] = id
        var bytes: [UInt8] = []
        JSONValue.object(request).serialize(into: &bytes)
        socket?.send(text: bytes)
        return id
    }

    func login() -> JSONValue {
        send(["op": "login", "uid": "trent", "authKey": "mockchat-dev-key", "deviceId": "control-desktop",
              "platform": "desktop", "presence": ["mode": "none"]])
    }

    func ping() -> JSONValue { send(["op": "ping"]) }

    /// Ends the connection at once (a new control client takes over).
    func close() { socket?.drop() }

    /// The reply carrying `id`, if it arrived.
    func reply(to id: JSONValue) -> JSONValue? { replies.last { $0["id"] == id } }
}
