import EventLoop
import Foundation

/// One connection of the generator: TCP, the HTTP upgrade, then WebSocket frames.
///
/// Outgoing frames are appended to one buffer and go out with a single write, either
/// when the owner calls ``flush()`` or at the end of the read that produced them, so a
/// batch of replies triggers a batch of sends in one system call. Server pings are
/// answered, a server close is answered with a close, and an ended stream closes the
/// socket.
public final class BenchSocket {
    /// Why a connection did not open.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case connect(String)
        case rejected(String)
        case closed

        public var description: String {
            switch self {
            case .connect(let reason): "connect failed: \(reason)"
            case .rejected(let line): "upgrade refused: \(line)"
            case .closed: "stream ended during the upgrade"
            }
        }
    }

    public enum State: Sendable, Equatable { case idle, connecting, upgrading, open, closed }

    /// The owner's number for this socket.
    public let index: Int
    public private(set) var state = State.idle
    /// A text message arrived; the payload is valid only during the call.
    public var onText: ((UnsafeRawBufferPointer) -> Void)?
    /// The socket is closed (after it was open, or after a failed open).
    public var onClosed: (() -> Void)?

    private var connection: TCPConnection?
    private var encoder: ClientFrameEncoder
    private var decoder = ServerFrameDecoder()
    private var output: [UInt8] = []
    private var head: [UInt8] = []
    private var expectedAccept = ""
    private var closeSent = false

    public init(index: Int, seed: UInt64) {
        self.index = index
        encoder = ClientFrameEncoder(seed: seed)
        output.reserveCapacity(256)
    }

    /// Connects and upgrades; `completion` runs once, on the loop.
    public func open(on loop: EventLoop, to address: SocketAddress, from source: SocketAddress? = nil,
                     completion: @escaping (Result<Void, Failure>) -> Void) {
        precondition(state == .idle || state == .closed, "open() on a socket in use")
        state = .connecting
        decoder = ServerFrameDecoder()
        closeSent = false
        head.removeAll()
        output.removeAll(keepingCapacity: true)
        TCPConnection.connect(on: loop, to: address, from: source) { [self] result in
            switch result {
            case .failure(let error):
                state = .closed
                completion(.failure(.connect(error.name)))
            case .success(let connection):
                self.connection = connection
                upgrade(connection, host: address.description, completion: completion)
            }
        }
    }

    /// Appends a text frame to the pending output.
    public func queueText(_ payload: [UInt8]) {
        guard state == .open, !closeSent else { return }
        encoder.appendText(payload, to: &output)
    }

    /// Writes the pending output, if any, with one write.
    public func flush() {
        guard !output.isEmpty, let connection, state == .open else { return }
        connection.write(output)
        output.removeAll(keepingCapacity: true)
    }

    /// Queues and sends one text frame.
    public func sendText(_ payload: [UInt8]) {
        queueText(payload)
        flush()
    }

    /// Closes the TCP stream at once (no closing handshake).
    public func close() {
        guard let connection else {
            state = .closed
            return
        }
        connection.close()
    }

    // MARK: internals

    private func upgrade(_ connection: TCPConnection, host: String,
                         completion: @escaping (Result<Void, Failure>) -> Void) {
        state = .upgrading
        var random = SplitMix64(seed: UInt64(index) &* 0x9E37_79B9 &+ 17)
        let key = Data((0..<16).map { _ in UInt8(truncatingIfNeeded: random.next()) }).base64EncodedString()
        expectedAccept = WebSocketHandshake.acceptValue(forKey: key)
        let request = "GET /v1/ws HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        var pending: ((Result<Void, Failure>) -> Void)? = completion
        func finish(_ result: Result<Void, Failure>) {
            guard let callback = pending else { return }
            pending = nil
            callback(result)
        }
        connection.onEnd = { [unowned self, unowned connection] _ in
            connection.close()
            if state != .open { finish(.failure(.closed)) }
        }
        connection.onClosed = { [unowned self] in
            let wasOpen = state == .open
            state = .closed
            self.connection = nil
            if wasOpen { onClosed?() } else { finish(.failure(.closed)) }
        }
        connection.onRead = { [unowned self, unowned connection] bytes in
            if state == .open {
                receive(bytes, on: connection)
                return
            }
            head.append(contentsOf: bytes)
            guard let end = HTTPResponse.headEnd(head) else {
                if head.count > 16 * 1024 {
                    finish(.failure(.rejected("response head too large")))
                    connection.close()
                }
                return
            }
            let text = String(decoding: head[..<end], as: UTF8.self)
            let statusLine = text.prefix { $0 != "\r" }
            let acceptLine = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-accept:") }
            let accept = acceptLine.map { $0.dropFirst("sec-websocket-accept:".count).trimmingCharacters(in: .whitespaces) }
            guard statusLine.hasPrefix("HTTP/1.1 101"), accept == expectedAccept else {
                finish(.failure(.rejected(String(statusLine.prefix(80)))))
                connection.close()
                return
            }
            let rest = Array(head[(end + 4)...])
            head = []
            state = .open
            finish(.success(()))
            if !rest.isEmpty { rest.withUnsafeBytes { receive($0, on: connection) } }
        }
        connection.write(Array(request.utf8))
    }

    private func receive(_ bytes: UnsafeRawBufferPointer, on connection: TCPConnection) {
        do {
            try decoder.feed(bytes) { opcode, payload in
                switch opcode {
                case 1: onText?(payload)
                case 8:
                    // Answer the close with the same code, then wait for the server to end the stream.
                    guard !closeSent else { break }
                    closeSent = true
                    encoder.append(opcode: 8, payload: UnsafeRawBufferPointer(rebasing: payload.prefix(2)), to: &output)
                case 9: encoder.append(opcode: 10, payload: payload, to: &output)
                default: break
                }
            }
        } catch {
            connection.close()
            return
        }
        flush()
    }

}
