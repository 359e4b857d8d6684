import ChatProtocol
import EventLoop
import Testing

/// A WebSocket client that records every frame the server sends.
public final class TestClient {
    public let socket: WebSocket
    public unowned let fixture: ServerFixture
    /// Every text frame, parsed (nil when a frame was not a server message).
    public private(set) var messages: [ServerMessage] = []
    /// Frames that were not valid JSON or not a known server message.
    public private(set) var unparsed: [String] = []
    /// How the connection ended, and when on the virtual clock.
    public private(set) var closeInfo: WebSocket.CloseInfo?
    public private(set) var closedAt: Instant?
    private var nextID: Int64 = 1

    public init(fixture: ServerFixture, socket: WebSocket) {
        self.fixture = fixture
        self.socket = socket
        let clock = fixture.loop.clock
        socket.onText = { [weak self] bytes in
            guard let self else { return }
            if let value = try? JSONParser.parse(bytes), let message = ServerMessage(json: value) {
                self.messages.append(message)
            } else {
                self.unparsed.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        socket.onClosed = { [weak self] info in
            self?.closeInfo = info
            self?.closedAt = clock.now
        }
    }

    public var isClosed: Bool { closeInfo != nil }

    /// Pushed events (user.online, user.offline, device.kicked) in order of arrival.
    public var events: [ServerMessage] { messages.filter(\.isEvent) }

    /// Presence events as ("user.online" | "user.offline", user).
    public var presence: [(event: String, user: User)] {
        messages.compactMap { message in
            switch message {
            case .userOnline(let user): ("user.online", user)
            case .userOffline(let user): ("user.offline", user)
            default: nil
            }
        }
    }

    /// Forgets what was received so far.
    public func clear() { messages.removeAll() }

    /// The reply to request `id`, if it arrived.
    public func reply(to id: RequestID) -> ServerMessage? {
        messages.first { $0.requestID == id }
    }

    /// Sends a text frame as is.
    public func send(text: String) {
        socket.send(text: Array(text.utf8))
    }

    /// Sends a request with a fresh integer id; returns the id.
    @discardableResult
    public func send(_ op: String, _ fields: KeyValuePairs<String, JSONValue> = [:]) -> RequestID {
        let id = RequestID.integer(nextID)
        nextID += 1
        var object = JSONObject([("id", id.json), ("op", .string(op))])
        for (key, value) in fields { object[key] = value }
        send(text: JSONValue.object(object).serialized())
        return id
    }

    /// Sends a request, settles, and returns its reply.
    public func request(_ op: String, _ fields: KeyValuePairs<String, JSONValue> = [:],
                 sourceLocation: SourceLocation = #_sourceLocation) -> ServerMessage? {
        let id = send(op, fields)
        fixture.settle(sourceLocation: sourceLocation)
        return reply(to: id)
    }

    /// Sends `login` with the app's auth key unless another key or a token is given.
    public func login(uid: String?, device: String, platform: Platform = .desktop,
               presence: PresenceSubscription = .allUsers, authKey: String? = "mockchat-dev-key",
               token: String? = nil, reconnect: Bool = false, reconnectKickEnable: Bool = false,
               sourceLocation: SourceLocation = #_sourceLocation) -> ServerMessage? {
        let login = LoginRequest(uid: uid, authKey: token == nil ? authKey : nil, token: token, deviceId: device,
                                 platform: platform, presence: presence, reconnect: reconnect,
                                 reconnectKickEnable: reconnectKickEnable)
        let id = RequestID.integer(nextID)
        nextID += 1
        send(text: Request.login(login).json(id: id).serialized())
        fixture.settle(sourceLocation: sourceLocation)
        return reply(to: id)
    }

    /// Loses the connection without a close frame (a TCP reset), as a killed app would.
    public func drop() {
        socket.drop(reset: true)
    }

    /// Starts a closing handshake from the client side.
    public func close(code: UInt16 = 1000) {
        socket.close(code: code)
    }
}
