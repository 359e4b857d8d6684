import EventLoop
import WireKit

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
    private var response = HTTPResponseReader()
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
        response = HTTPResponseReader()
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
        let request = UpgradeRequest(host: host, random: &random)
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
            response.feed(bytes)
            if let malformed = response.malformed {
                finish(.failure(.rejected(malformed)))
                connection.close()
                return
            }
            guard response.isComplete, let reply = response.reply else { return }
            if let failure = request.check(reply) {
                switch failure {
                case .rejected(let status, let body): finish(.failure(.rejected("\(status) \(body.prefix(80))")))
                case .invalidResponse(let reason): finish(.failure(.rejected(reason)))
                }
                connection.close()
                return
            }
            let rest = response.takeRemainder()
            state = .open
            finish(.success(()))
            if !rest.isEmpty { rest.withUnsafeBytes { receive($0, on: connection) } }
        }
        connection.write(request.bytes)
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
