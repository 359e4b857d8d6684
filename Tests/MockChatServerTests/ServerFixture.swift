import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import Testing

/// A failure of the fixture itself (a connection that never completed, a reply that
/// never came), thrown so that the test stops with a readable message.
struct FixtureFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A ChatServer on 127.0.0.1 (a free port) with the embedded fixtures, on a loop whose
/// clock is virtual. Server and clients share the loop and the test's thread: every
/// wait is `settle()` or `run(timeout:until:)`.
///
/// The loop is shut down when the fixture goes away, so a test that stops early never
/// leaves a loop behind; tests that check the shutdown status call ``shutdown()``.
final class ServerFixture {
    let loop: EventLoop
    let server: ChatServer
    /// Seeds for WebSocket keys and masks: the same sequence in every run.
    private var nextSeed: UInt64 = 1

    /// Starts a server; `configure` may change the embedded app settings first.
    init(access: ControlAccess = ControlAccess(), configure: (inout AppSettings) -> Void = { _ in },
         server serverSettings: (inout ChatServer.Configuration) -> Void = { _ in }, trace: TraceLog? = nil,
         clock: Clock.Mode = .virtual(start: .virtualEpoch)) throws {
        let loop = try EventLoop(clockMode: clock)
        do {
            let fixtures = try FixtureSet.embedded()
            var settings = fixtures.settings
            configure(&settings)
            var configuration = ChatServer.Configuration()
            configuration.address = SocketAddress(host: "127.0.0.1", port: 0)
            configuration.controlAccess = access
            serverSettings(&configuration)
            server = try ChatServer(loop: loop, configuration: configuration, directory: fixtures.directory,
                                    settings: settings, trace: trace)
        } catch {
            loop.shutdown()
            throw error
        }
        self.loop = loop
    }

    deinit {
        loop.shutdown()
    }

    /// The virtual time.
    var now: Instant { loop.clock.now }

    /// Closes every handle and returns `uv_loop_close`'s status.
    func shutdown() -> Int32 { loop.shutdown() }

    /// Waits until all in-process traffic is delivered; records an issue if it never is.
    func settle(sourceLocation: SourceLocation = #_sourceLocation) {
        if !loop.settle() { Issue.record("the loop did not settle", sourceLocation: sourceLocation) }
    }

    /// Moves virtual time forward, letting every timer firing settle before the next.
    func advance(seconds: Double) {
        advance(milliseconds: Int64((seconds * 1000).rounded()))
    }

    func advance(milliseconds: Int64) {
        let loop = self.loop
        loop.clock.advance(to: loop.clock.now.advanced(by: milliseconds)) { loop.settle() }
        settle()
    }

    /// Moves virtual time to `instant` (which must not be in the past).
    func advance(to instant: Instant) {
        advance(milliseconds: instant.milliseconds - now.milliseconds)
    }

    // MARK: WebSocket clients

    /// Opens a WebSocket to the server, or reports why it could not.
    func tryConnect(path: String = "/v1/ws") -> Result<WebSocket, WebSocketClient.Failure>? {
        var outcome: Result<WebSocket, WebSocketClient.Failure>?
        WebSocketClient.connect(on: loop, to: server.address, path: path, seed: nextSeed) { outcome = $0 }
        nextSeed += 1
        loop.run(timeout: 5) { outcome != nil }
        return outcome
    }

    /// Opens a WebSocket and waits until the server has attached it.
    func connect() throws -> TestClient {
        guard let outcome = tryConnect() else { throw FixtureFailure("WebSocket connect timed out") }
        let client = TestClient(fixture: self, socket: try outcome.get())
        settle()
        return client
    }

    /// Connects and logs in; throws unless the login succeeded. The returned client's
    /// message log starts empty (the login reply is checked, then cleared).
    func loggedIn(_ uid: String, device: String, platform: Platform = .desktop,
                  presence: PresenceSubscription = .allUsers) throws -> TestClient {
        let client = try connect()
        let reply = client.login(uid: uid, device: device, platform: platform, presence: presence)
        guard reply?.resultObject?["connectionId"] != nil else {
            throw FixtureFailure("login of \(uid) on \(device) failed: \(String(describing: reply))")
        }
        client.clear()
        return client
    }

    // MARK: Raw TCP

    /// Opens a plain TCP connection to the server.
    func rawConnect() throws -> RawConnection {
        var outcome: Result<TCPConnection, UVError>?
        TCPConnection.connect(on: loop, to: server.address) { outcome = $0 }
        guard loop.run(timeout: 5, until: { outcome != nil }) else { throw FixtureFailure("TCP connect timed out") }
        return RawConnection(try outcome!.get())
    }

    /// Sends `bytes` on a fresh connection and collects everything until the server closes.
    func rawExchange(_ bytes: [UInt8]) throws -> RawConnection {
        let raw = try rawConnect()
        raw.write(bytes)
        guard loop.run(timeout: 5, until: { raw.isClosed }) else {
            raw.connection.close()
            throw FixtureFailure("the server did not close the connection")
        }
        return raw
    }

    /// Sends an HTTP request made of `text` and parses the response.
    func rawHTTP(_ text: String) throws -> HTTPReply {
        let raw = try rawExchange(Array(text.utf8))
        guard let reply = HTTPReply(raw.received) else {
            throw FixtureFailure("not an HTTP response: \(String(decoding: raw.received, as: UTF8.self))")
        }
        return reply
    }

    /// A request to the control API; the body, if any, is sent with its length.
    func control(_ method: String, _ path: String, body: String? = nil) throws -> HTTPReply {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: \(server.address)\r\n"
        if let body { text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        let reply = try rawHTTP(text)
        settle()
        return reply
    }
}

/// A WebSocket client that records every frame the server sends.
final class TestClient {
    let socket: WebSocket
    unowned let fixture: ServerFixture
    /// Every text frame, parsed (nil when a frame was not a server message).
    private(set) var messages: [ServerMessage] = []
    /// Frames that were not valid JSON or not a known server message.
    private(set) var unparsed: [String] = []
    /// How the connection ended, and when on the virtual clock.
    private(set) var closeInfo: WebSocket.CloseInfo?
    private(set) var closedAt: Instant?
    private var nextID: Int64 = 1

    init(fixture: ServerFixture, socket: WebSocket) {
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

    var isClosed: Bool { closeInfo != nil }

    /// Pushed events (user.online, user.offline, device.kicked) in order of arrival.
    var events: [ServerMessage] { messages.filter(\.isEvent) }

    /// Presence events as ("user.online" | "user.offline", user).
    var presence: [(event: String, user: User)] {
        messages.compactMap { message in
            switch message {
            case .userOnline(let user): ("user.online", user)
            case .userOffline(let user): ("user.offline", user)
            default: nil
            }
        }
    }

    /// Forgets what was received so far.
    func clear() { messages.removeAll() }

    /// The reply to request `id`, if it arrived.
    func reply(to id: RequestID) -> ServerMessage? {
        messages.first { $0.requestID == id }
    }

    /// Sends a text frame as is.
    func send(text: String) {
        socket.send(text: Array(text.utf8))
    }

    /// Sends a request with a fresh integer id; returns the id.
    @discardableResult
    func send(_ op: String, _ fields: KeyValuePairs<String, JSONValue> = [:]) -> RequestID {
        let id = RequestID.integer(nextID)
        nextID += 1
        var object = JSONObject([("id", id.json), ("op", .string(op))])
        for (key, value) in fields { object[key] = value }
        send(text: JSONValue.object(object).serialized())
        return id
    }

    /// Sends a request, settles, and returns its reply.
    func request(_ op: String, _ fields: KeyValuePairs<String, JSONValue> = [:],
                 sourceLocation: SourceLocation = #_sourceLocation) -> ServerMessage? {
        let id = send(op, fields)
        fixture.settle(sourceLocation: sourceLocation)
        return reply(to: id)
    }

    /// Sends `login` with the app's auth key unless another key or a token is given.
    func login(uid: String?, device: String, platform: Platform = .desktop,
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
    func drop() {
        socket.drop(reset: true)
    }

    /// Starts a closing handshake from the client side.
    func close(code: UInt16 = 1000) {
        socket.close(code: code)
    }
}

/// A plain TCP connection that collects what arrives.
final class RawConnection {
    let connection: TCPConnection
    private(set) var received: [UInt8] = []
    /// The stream ended: nil error for an orderly end, else the failure (e.g. ECONNRESET).
    private(set) var ended = false
    private(set) var endError: UVError?
    private(set) var isClosed = false
    /// The size of each read, in order.
    private(set) var readSizes: [Int] = []

    init(_ connection: TCPConnection) {
        self.connection = connection
        connection.onRead = { [weak self] bytes in
            self?.received.append(contentsOf: bytes)
            self?.readSizes.append(bytes.count)
        }
        connection.onEnd = { [weak self, unowned connection] error in
            self?.ended = true
            self?.endError = error
            connection.close()
        }
        connection.onClosed = { [weak self] in self?.isClosed = true }
    }

    func write(_ bytes: [UInt8]) { connection.write(bytes) }

    /// Server frames after the HTTP head (servers never mask).
    var frames: [WebSocketFrame] {
        guard let end = HTTPResponse.headEnd(received) else { return [] }
        return WebSocketFrame.decode(received[(end + 4)...])
    }
}

/// A parsed HTTP response.
struct HTTPReply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    init?(_ bytes: [UInt8]) {
        guard let end = HTTPResponse.headEnd(bytes) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else { return nil }
        self.status = status
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        body = Array(bytes[(end + 4)...])
    }

    /// Values of the header `name`, compared case-insensitively.
    func header(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var json: JSONValue? { try? JSONParser.parse(body) }

}

/// One WebSocket frame, for tests that speak the protocol by hand.
struct WebSocketFrame: Equatable {
    var opcode: UInt8
    var payload: [UInt8]

    var text: String { String(decoding: payload, as: UTF8.self) }

    /// A close frame's code.
    var closeCode: UInt16? {
        guard opcode == 8, payload.count >= 2 else { return nil }
        return UInt16(payload[0]) << 8 | UInt16(payload[1])
    }

    /// Complete unmasked frames at the start of `bytes`; a trailing partial frame is ignored.
    static func decode(_ bytes: ArraySlice<UInt8>) -> [WebSocketFrame] {
        var frames: [WebSocketFrame] = []
        var index = bytes.startIndex
        while bytes.endIndex - index >= 2 {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                guard bytes.endIndex - start >= 2 else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard bytes.endIndex - start >= 8 else { break }
                length = bytes[start..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard bytes.endIndex - start >= length else { break }
            frames.append(WebSocketFrame(opcode: opcode, payload: Array(bytes[start..<(start + length)])))
            index = start + length
        }
        return frames
    }
}

/// A valid client handshake for `/v1/ws` with a fixed key.
func handshakeRequest(path: String = "/v1/ws", method: String = "GET", version: String = "HTTP/1.1",
                      key: String = "dGhlIHNhbXBsZSBub25jZQ==", wsVersion: String = "13",
                      extraHeaders: String = "") -> String {
    "\(method) \(path) \(version)\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: \(wsVersion)\r\n\(extraHeaders)\r\n"
}

extension ServerMessage {
    /// The id of a reply; nil for events and for errors without an id.
    var requestID: RequestID? {
        switch self {
        case .result(let id, _): id
        case .error(let id, _): id
        default: nil
        }
    }

    var isEvent: Bool {
        switch self {
        case .userOnline, .userOffline, .deviceKicked: true
        default: false
        }
    }

    /// The result object of a successful reply.
    var resultObject: JSONObject? {
        if case .result(_, let object) = self { return object }
        return nil
    }

    /// The error code of a failed reply.
    var errorCode: String? {
        if case .error(_, let error) = self { return error.code }
        return nil
    }

    /// The users of a `users.list` reply, by uid.
    var listedUIDs: [String]? {
        resultObject?["users"]?.arrayValue?.compactMap { $0["uid"]?.stringValue }
    }

    /// The `next` cursor of a `users.list` reply (nil when null or absent).
    var nextCursor: String? { resultObject?["next"]?.stringValue }

    /// The user of a `users.get` or `login` reply.
    var resultUser: User? { resultObject?["user"].flatMap(User.init(json:)) }
}

/// The package's root folder, found from this file's path.
func packageRoot(filePath: String = #filePath) -> URL {
    URL(fileURLWithPath: filePath)
        .deletingLastPathComponent()  // MockChatServerTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()
}
