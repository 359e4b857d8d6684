import CWslay

/// One WebSocket connection (RFC 6455 framing through wslay) over a ``TCPConnection``.
///
/// wslay is driven the way its event API expects: bytes read from the socket are
/// offered through the receive callback until it reports `WOULDBLOCK`; frames wslay
/// wants to send are gathered by the send callback into one buffer and written with a
/// single `uv_write`. Ping frames are answered by wslay, protocol violations make it
/// queue a close frame with the right code (1002, 1007, 1009), and the TCP stream is
/// closed once wslay neither wants to read nor to write. A peer that does not finish
/// the closing handshake is cut off after ``Configuration/closeTimeout``.
public final class WebSocket {
    /// Which side of the handshake this endpoint was.
    public enum Role: Sendable {
        case server
        /// Clients mask their frames; the masks come from a seeded generator so that
        /// runs are reproducible.
        case client(maskSeed: UInt64)
    }

    /// Tunables with conservative defaults.
    public struct Configuration: Sendable {
        /// Largest message accepted; a larger one is refused with close code 1009
        /// before its payload is buffered.
        public var maxMessageBytes: Int = 64 * 1024
        /// How long a peer has to answer our close frame, in milliseconds of clock time.
        public var closeTimeout: Int64 = 5_000
        /// Frames one fragmented message may have; more is refused with close 1008, so a
        /// flood of empty fragments cannot grow memory.
        public var maxFragments = 1_024
        public init() {}
    }

    /// How the connection ended.
    public struct CloseInfo: Sendable, Equatable {
        /// The close code we sent, if a close frame was sent.
        public var sent: UInt16?
        /// The close code the peer sent (1005 when its close frame had none).
        public var received: UInt16?
        /// Why the stream ended without a full closing handshake, if it did.
        public var abnormal: String?
    }

    public let connection: TCPConnection
    public let configuration: Configuration
    /// A complete text message (already checked to be UTF-8).
    public var onText: ((UnsafeRawBufferPointer) -> Void)?
    /// A complete binary message.
    public var onBinary: ((UnsafeRawBufferPointer) -> Void)?
    /// The peer sent a ping or pong frame (pings are already answered).
    public var onControlFrame: (() -> Void)?
    /// The TCP stream is closed; called once.
    public var onClosed: ((CloseInfo) -> Void)?

    private var context: wslay_event_context_ptr?
    private var input: UnsafeRawBufferPointer?
    private var output: [UInt8] = []
    private var masks: SplitMix64
    private var closeTimer: Clock.TimerID?
    private var abnormal: String?
    private var isFinished = false
    private var fragments = 0
    private var policyViolation: String?

    /// Wraps an upgraded connection; `initialBytes` are those that followed the handshake.
    public init(connection: TCPConnection, role: Role, configuration: Configuration = .init(),
                initialBytes: [UInt8] = []) {
        self.connection = connection
        self.configuration = configuration
        if case .client(let seed) = role { masks = SplitMix64(seed: seed) } else { masks = SplitMix64(seed: 0) }
        var callbacks = wslay_event_callbacks(
            recv_callback: { _, buffer, length, _, userData in
                WebSocket.from(userData).receive(into: buffer, length: length)
            },
            send_callback: { _, data, length, _, userData in
                WebSocket.from(userData).output.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
                return length
            },
            genmask_callback: { _, buffer, length, userData in
                WebSocket.from(userData).fillMask(buffer, length)
                return 0
            },
            on_frame_recv_start_callback: { _, argument, userData in
                guard let argument else { return }
                WebSocket.from(userData).frameStarted(opcode: argument.pointee.opcode)
            },
            on_frame_recv_chunk_callback: nil,
            on_frame_recv_end_callback: nil,
            on_msg_recv_callback: { _, argument, userData in
                guard let argument else { return }
                WebSocket.from(userData).deliver(argument.pointee)
            })
        let userData = Unmanaged.passUnretained(self).toOpaque()
        switch role {
        case .server: wslay_event_context_server_init(&context, &callbacks, userData)
        case .client: wslay_event_context_client_init(&context, &callbacks, userData)
        }
        wslay_event_config_set_max_recv_msg_length(context, UInt64(configuration.maxMessageBytes))
        connection.onRead = { [unowned self] bytes in self.feed(bytes) }
        connection.onEnd = { [unowned self] error in
            self.abnormal = error.map { "stream failed: \($0.name)" } ?? "peer closed the stream"
            self.connection.close()
        }
        connection.onClosed = { [self] in self.finish() }
        if !initialBytes.isEmpty { initialBytes.withUnsafeBytes { feed($0) } }
    }

    /// Whether a close frame has been sent or the stream is gone.
    public var isClosing: Bool {
        isFinished || context.map { wslay_event_get_close_sent($0) != 0 } ?? true
    }

    /// Sends a text message.
    public func send(text bytes: some Collection<UInt8>) {
        queue(opcode: 1, bytes)
    }

    /// Sends a ping frame.
    public func sendPing(_ payload: [UInt8] = []) {
        queue(opcode: 9, payload)
    }

    /// Starts the closing handshake with `code` and a short reason.
    public func close(code: UInt16, reason: String = "") {
        guard let context, !isFinished, wslay_event_get_close_sent(context) == 0 else { return }
        var reasonBytes = Array(reason.utf8.prefix(123))
        wslay_event_queue_close(context, code, &reasonBytes, reasonBytes.count)
        flush()
    }

    /// Ends the TCP stream at once without a close frame: a reset when `reset` is true,
    /// as a killed process or a lost network would.
    public func drop(reset: Bool = true) {
        abnormal = "dropped"
        reset ? connection.reset() : connection.close()
    }

    /// Offers bytes read from the socket to wslay.
    public func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let context, !isFinished else { return }
        input = bytes
        let status = wslay_event_recv(context)
        input = nil
        if status != 0 {
            abnormal = "framing failed (\(status))"
            connection.close()
            return
        }
        if let violation = policyViolation, wslay_event_get_close_sent(context) == 0 {
            wslay_event_shutdown_read(context)
            var reason = Array(violation.utf8.prefix(123))
            wslay_event_queue_close(context, 1008, &reason, reason.count)
        }
        flush()
    }

    /// Counts the frames of the message being received.
    private func frameStarted(opcode: UInt8) {
        guard opcode < 8 else { return }  // control frames may interleave
        fragments = opcode == 0 ? fragments + 1 : 1
        if fragments > configuration.maxFragments, policyViolation == nil {
            policyViolation = "more than \(configuration.maxFragments) fragments in one message"
        }
    }

    // MARK: internals

    private static func from(_ userData: UnsafeMutableRawPointer?) -> WebSocket {
        Unmanaged<WebSocket>.fromOpaque(userData!).takeUnretainedValue()
    }

    private func queue(opcode: UInt8, _ bytes: some Collection<UInt8>) {
        guard let context, !isFinished, wslay_event_get_close_sent(context) == 0 else { return }
        let status: Int32 = bytes.withContiguousStorageIfAvailable { buffer in
            var message = wslay_event_msg(opcode: opcode, msg: buffer.baseAddress, msg_length: buffer.count)
            return wslay_event_queue_msg(context, &message)
        } ?? Array(bytes).withUnsafeBufferPointer { buffer in
            var message = wslay_event_msg(opcode: opcode, msg: buffer.baseAddress, msg_length: buffer.count)
            return wslay_event_queue_msg(context, &message)
        }
        if status == 0 { flush() }
    }

    private func receive(into buffer: UnsafeMutablePointer<UInt8>?, length: Int) -> Int {
        guard let buffer, let available = input, !available.isEmpty else {
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        }
        let count = min(length, available.count)
        UnsafeMutableRawPointer(buffer).copyMemory(from: available.baseAddress!, byteCount: count)
        input = UnsafeRawBufferPointer(rebasing: available[count...])
        return count
    }

    private func deliver(_ message: wslay_event_on_msg_recv_arg) {
        let payload = UnsafeRawBufferPointer(start: message.msg, count: message.msg_length)
        switch message.opcode {
        case 1: onText?(payload)
        case 2: onBinary?(payload)
        case 9, 10: onControlFrame?()
        default: break
        }
    }

    private func fillMask(_ buffer: UnsafeMutablePointer<UInt8>?, _ length: Int) {
        guard let buffer else { return }
        for index in 0..<length { buffer[index] = UInt8(truncatingIfNeeded: masks.next()) }
    }

    /// Sends what wslay has queued, then closes the stream if the session is over.
    private func flush() {
        guard let context, !isFinished, connection.state == .open else { return }
        if wslay_event_send(context) != 0 {
            abnormal = "send failed"
            connection.close()
            return
        }
        if !output.isEmpty {
            connection.write(output)
            output.removeAll(keepingCapacity: true)
        }
        let closeSent = wslay_event_get_close_sent(context) != 0
        if wslay_event_want_read(context) == 0 && wslay_event_want_write(context) == 0 {
            connection.closeAfterWrites()
        } else if closeSent, closeTimer == nil {
            closeTimer = connection.loop.clock.schedule(after: configuration.closeTimeout) { [weak self] in
                guard let self, !self.isFinished else { return }
                self.abnormal = "peer did not finish the closing handshake"
                self.connection.close()
            }
        }
    }

    private func finish() {
        guard !isFinished else { return }
        isFinished = true
        connection.loop.clock.cancel(closeTimer)
        var info = CloseInfo(abnormal: nil)
        if let context {
            if wslay_event_get_close_sent(context) != 0 { info.sent = wslay_event_get_status_code_sent(context) }
            if wslay_event_get_close_received(context) != 0 {
                info.received = wslay_event_get_status_code_received(context)
            }
            wslay_event_context_free(context)
            self.context = nil
        }
        if info.sent == nil || info.received == nil { info.abnormal = abnormal ?? "stream ended" }
        let onClosed = self.onClosed
        self.onText = nil
        self.onBinary = nil
        self.onControlFrame = nil
        self.onClosed = nil
        onClosed?(info)
    }
}

/// A small seeded generator (SplitMix64): deterministic masks and test inputs.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
