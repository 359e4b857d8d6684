/// What one client WebSocket has exchanged, as compared with the server's view of the
/// same connection when two processes settle together (docs/DRIVER.md, "Settling").
public struct SocketCount: Sendable, Equatable, CustomStringConvertible {
    /// The client's local TCP port (0 while the socket is still opening).
    public var port: Int
    /// False while the TCP connect or the upgrade is under way.
    public var isOpen: Bool
    /// Text messages sent.
    public var sent: Int
    /// Text messages received.
    public var received: Int
    /// The server's side of a connection under a silence fault: the client may have let
    /// it go without the server knowing, since nothing crosses.
    public var silent: Bool
    /// The server's side of a connection under latency, with bytes from the client on
    /// their way: it has received fewer messages than the client sent, and only time
    /// brings them.
    public var receiving: Bool
    /// The server's side of an upgrade it holds unanswered (an `upgrade` fault with
    /// `answer: never`, or a silence's new connections): the client's socket stays
    /// opening until its own deadline, and nothing is in flight meanwhile.
    public var held: Bool

    public init(port: Int, isOpen: Bool, sent: Int, received: Int, silent: Bool = false, receiving: Bool = false,
                held: Bool = false) {
        self.port = port
        self.isOpen = isOpen
        self.sent = sent
        self.received = received
        self.silent = silent
        self.receiving = receiving
        self.held = held
    }

    public var description: String {
        held ? "\(port): held" : isOpen ? "\(port): sent \(sent), received \(received)" : "\(port): opening"
    }
}

/// The client WebSockets of one loop, from the first connect until the TCP stream is
/// closed, whoever owns them (a socket the SDK gave up on still counts until closed).
public final class ClientSockets {
    /// Connects and upgrades under way.
    public internal(set) var opening = 0
    /// The opening ones whose TCP connection is made: their upgrade is on its way.
    private var handshakes: [ObjectIdentifier: TCPConnection] = [:]
    private var open: [ObjectIdentifier: WebSocket] = [:]

    func handshakeStarted(_ connection: TCPConnection) { handshakes[ObjectIdentifier(connection)] = connection }
    func handshakeEnded(_ connection: TCPConnection) { handshakes[ObjectIdentifier(connection)] = nil }

    func add(_ socket: WebSocket) { open[ObjectIdentifier(socket)] = socket }
    func remove(_ socket: WebSocket) { open[ObjectIdentifier(socket)] = nil }

    /// Every socket, opening ones first, then open ones by port.
    public var counts: [SocketCount] {
        let connecting = Array(repeating: SocketCount(port: 0, isOpen: false, sent: 0, received: 0),
                               count: max(0, opening - handshakes.count))
        let upgrading = handshakes.values.map { connection in
            SocketCount(port: connection.localAddress?.port ?? 0, isOpen: false, sent: 0, received: 0)
        }.sorted { $0.port < $1.port }
        return connecting + upgrading + open.values.map { socket in
            SocketCount(port: socket.connection.localAddress?.port ?? 0, isOpen: true,
                        sent: socket.textMessagesSent, received: socket.textMessagesReceived)
        }.sorted { $0.port < $1.port }
    }
}
