import CWslay
import WireKit

/// One WebSocket connection (RFC 6455 framing through wslay) over a ``TCPConnection``.
///
/// wslay is driven the way its event API expects: bytes read from the socket are
/// offered through the receive callback until it reports `WOULDBLOCK`; frames wslay
/// wants to send are gathered by the send callback into one buffer and written with a
/// single `uv_write`. Ping frames are answered by wslay, protocol violations make it
/// queue a close frame with the right code (1002, 1007, 1009), and the TCP stream is
/// closed once wslay neither wants to read nor to write. A peer that does not finish
/// the closing handshake is cut off after ``Configuration/closeTimeout``.
///
/// A few refusals wslay does not make, or makes without the right code, are made here:
/// a header announcing more than ``Configuration/maxMessageBytes`` is refused with 1009
/// as soon as it is complete (wslay waits for the first payload byte), a message of
/// more than ``Configuration/maxFragments`` frames with 1008 before it is delivered, a
/// close frame with a 1-byte body with 1002 (wslay takes it for a close without a
/// code), and a header wslay's frame reader rejects (an oversized or fragmented control
/// frame, a malformed length) with 1002 and a reason (wslay would send an empty close).
/// One acceptance wslay does not make is made here too: close codes 1012-1014
/// (``RegisteredCloseWatch``).
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
    @exclusivity(unchecked) public var onText: ((UnsafeRawBufferPointer) -> Void)?
    /// A complete binary message.
    public var onBinary: ((UnsafeRawBufferPointer) -> Void)?
    /// The peer sent a ping or pong frame (pings are already answered).
    public var onControlFrame: (() -> Void)?
    /// The TCP stream is closed; called once.
    public var onClosed: ((CloseInfo) -> Void)?
    /// Text messages queued for sending so far.
    @exclusivity(unchecked) public private(set) var textMessagesSent = 0
    /// Text messages received so far (whether or not `onText` used them).
    @exclusivity(unchecked) public private(set) var textMessagesReceived = 0

    @exclusivity(unchecked) private var context: wslay_event_context_ptr?
    @exclusivity(unchecked) private var input: UnsafeRawBufferPointer?
    @exclusivity(unchecked) private var output: [UInt8] = []
    private var masks: SplitMix64
    private var closeTimer: Clock.TimerID?
    private var abnormal: String?
    @exclusivity(unchecked) private var isFinished = false
    @exclusivity(unchecked) private var fragments = 0
    private let isClient: Bool
    @exclusivity(unchecked) private var headers = FrameHeaderWatch()
    /// Why this side refused the peer's input, when it did (its close is queued or sent).
    private var refusal: String?
    /// Set once wslay's frame reader has failed: wslay is not asked for anything more.
    @exclusivity(unchecked) private var abandoned = false
    /// The code of a close frame written directly rather than through wslay.
    private var closeCodeSentDirectly: UInt16?
    private var registeredClose = RegisteredCloseWatch()
    /// The code of the peer's close when this side, not wslay, accepted it (1012-1014).
    private var registeredCloseReceived: UInt16?
    /// A slow close (``CloseDelays``); nil: this side's part of the closing handshake at once.
    public var closeDelays: CloseDelays? {
        didSet { releaseSlowClose() }
    }
    /// A slow close held something back: what, and for how long.
    public var onCloseDelayed: ((String) -> Void)?
    var slowClose = SlowCloseState()
    /// Under latency, the end offsets of the text messages that may not have crossed.
    private var messageEnds: [Int] = []
    /// Whether the socket is silent (``silence()``).
    private var isSilent = false
    /// The peer's bytes from a close frame that arrived while the socket was silent.
    private var heldInput: [UInt8]?

    /// Wraps an upgraded connection; `initialBytes` are those that followed the handshake.
    public init(connection: TCPConnection, role: Role, configuration: Configuration = .init(),
                initialBytes: [UInt8] = []) {
        self.connection = connection
        self.configuration = configuration
        switch role {
        case .server: (masks, isClient) = (SplitMix64(seed: 0), false)
        case .client(let seed): (masks, isClient) = (SplitMix64(seed: seed), true)
        }
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
                WebSocket.from(userData).frameStarted(opcode: argument.pointee.opcode,
                                                      length: argument.pointee.payload_length)
            },
            on_frame_recv_chunk_callback: { _, argument, userData in
                guard let argument else { return }
                WebSocket.from(userData).frameChunk(UnsafeBufferPointer(start: argument.pointee.data,
                                                                        count: argument.pointee.data_length))
            },
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
        // The connection holds this socket through its callbacks until its handle has
        // closed, when it drops them; capturing strongly spares each read an unowned
        // reference check.
        connection.onRead = { [self] bytes in self.feed(bytes) }
        connection.onEnd = { [self] error in
            self.abnormal = error.map { "stream failed: \($0.name)" } ?? "peer closed the stream"
            self.connection.close()
        }
        connection.onClosed = { [self] in self.finish() }
        if isClient { connection.loop.clientSockets.add(self) }
        if !initialBytes.isEmpty { initialBytes.withUnsafeBytes { feed($0) } }
    }

    /// Whether a close frame has been sent or the stream is gone.
    public var isClosing: Bool {
        isFinished || abandoned || context.map { wslay_event_get_close_sent($0) != 0 } ?? true
    }

    /// Sends a text message. Inlined, so that a caller in another module hands over
    /// contiguous bytes without going through generic code.
    @inlinable
    public func send(text bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ queue(opcode: 1, UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { queue(opcode: 1, $0) }
        }
    }

    /// Sends a ping frame.
    public func sendPing(_ payload: [UInt8] = []) {
        payload.withUnsafeBytes { queue(opcode: 9, $0) }
    }

    /// Starts the closing handshake with `code` and a short reason.
    public func close(code: UInt16, reason: String = "") {
        guard let context, !isFinished, !abandoned, wslay_event_get_close_sent(context) == 0 else { return }
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

    /// Ends the TCP stream after what is already queued, without a close frame: a
    /// server that gives up on a connection without the closing handshake.
    public func endWithoutCloseFrame() {
        abnormal = "ended without a close frame"
        connection.closeAfterWrites()
    }

    /// Goes on reading frames (and delivering them) but never writes again: no pong,
    /// no close frame, no answer of any kind, as a hung peer would.
    public func stopWriting() {
        guard let context, !isFinished, !abandoned else { return }
        wslay_event_shutdown_write(context)
    }

    /// Offers bytes read from the socket to wslay. While the socket is silent
    /// (``silence()``), the peer's close frame and what follows it wait for the silence's
    /// end.
    public func feed(_ bytes: UnsafeRawBufferPointer) {
        guard context != nil, !isFinished, !abandoned else { return }
        if heldInput != nil {
            heldInput?.append(contentsOf: bytes)
            return
        }
        let oversized = refusal == nil
            && headers.scan(bytes, limit: UInt64(configuration.maxMessageBytes))
        if let start = headers.closeFrameStart, !oversized, refusal == nil, isSilent {
            heldInput = Array(UnsafeRawBufferPointer(rebasing: bytes[start...]))
            consume(UnsafeRawBufferPointer(rebasing: bytes[..<start]), oversized: false)
            return
        }
        consume(bytes, oversized: oversized)
    }

    /// Makes the socket silent in both directions (``TCPConnection/silence()``). A close
    /// frame from the peer meanwhile is not handled until ``endSilence(release:)``.
    public func silence() {
        connection.silence()
        isSilent = connection.isSilenced
    }

    /// Ends the silence. With `release`, the peer's close that came meanwhile (and what
    /// followed it) is handled first, so that its answer leaves after what the owner sent
    /// for the frames before it, then what the connection held is applied in order
    /// (``TCPConnection/endSilence(release:)``). Without, both are forgotten.
    public func endSilence(release: Bool) {
        isSilent = false
        let held = heldInput
        heldInput = nil
        if release, let held, !isFinished, !abandoned {
            held.withUnsafeBytes { consume($0, oversized: false) }
        }
        connection.endSilence(release: release)
    }

    private func consume(_ bytes: UnsafeRawBufferPointer, oversized: Bool) {
        guard let context, !bytes.isEmpty else { return }
        input = bytes
        let status = wslay_event_recv(context)
        input = nil
        if status != 0 {
            // wslay's frame reader rejected a header (a control frame over 125 bytes or
            // fragmented, a length in a longer form than needed or with its top bit set).
            // wslay would answer with an empty close; RFC 6455 section 7.4.1 has 1002.
            if status == Int32(WSLAY_ERR_NOMEM.rawValue) {
                abandon(code: 1011, reason: "out of memory")
            } else {
                abandon(code: 1002, reason: "invalid frame header")
            }
            return
        }
        if oversized {
            refuse(code: 1009, reason: "message larger than \(configuration.maxMessageBytes) bytes")
        }
        flush()
    }

    /// Counts the frames of the message being received, and checks close frames'
    /// length, before wslay goes on with the frame.
    private func frameStarted(opcode: UInt8, length: UInt64) {
        registeredClose.frameStarted(opcode: opcode, length: length)
        if opcode == 8 && length == 1 {
            // Section 5.5.1: a close body starts with a 2-byte code.
            refuse(code: 1002, reason: "close frame with a 1-byte body")
            return
        }
        guard opcode < 8 else { return }  // control frames may interleave
        fragments = opcode == 0 ? fragments + 1 : 1
        if fragments > configuration.maxFragments {
            refuse(code: 1008, reason: "more than \(configuration.maxFragments) fragments in one message")
        }
    }

    /// A payload chunk wslay has read (unmasked): a close with a code wslay does not know
    /// but IANA registered is accepted here, as wslay accepts the others: reading stops
    /// and the close is echoed (unless this side's close went first).
    private func frameChunk(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let context, let (code, reason) = registeredClose.chunk(bytes) else { return }
        wslay_event_shutdown_read(context)
        registeredCloseReceived = code
        var echo = reason
        _ = wslay_event_queue_close(context, code, &echo, echo.count)
    }

    /// Stops reading and queues a close with `code` at once, so that wslay neither
    /// delivers nor answers the frame at hand. A close queued earlier wins.
    private func refuse(code: UInt16, reason: String) {
        guard let context, refusal == nil else { return }
        wslay_event_shutdown_read(context)
        var bytes = Array(reason.utf8.prefix(123))
        if wslay_event_queue_close(context, code, &bytes, bytes.count) == 0 { refusal = reason }
    }

    /// Fails the connection without wslay, whose state is no longer usable: writes a
    /// close frame with `code` (unless one went out already), then ends the stream.
    private func abandon(code: UInt16, reason: String) {
        guard let context, !abandoned else { return }
        abandoned = true
        refusal = reason
        if wslay_event_get_close_sent(context) == 0 {
            closeCodeSentDirectly = code
            var key: UInt32 = 0
            if isClient { withUnsafeMutableBytes(of: &key) { fillMask($0.baseAddress?.assumingMemoryBound(to: UInt8.self), 4) } }
            let frame = ClientFrame(opcode: 8, masked: isClient,
                                    payload: ClientFrame.closePayload(code: code, reason: Array(reason.utf8.prefix(123))))
            connection.write(frame.encoded(mask: UInt32(bigEndian: key)))
        }
        connection.closeAfterWrites()
    }

    // MARK: internals

    private static func from(_ userData: UnsafeMutableRawPointer?) -> WebSocket {
        Unmanaged<WebSocket>.fromOpaque(userData!).takeUnretainedValue()
    }

    /// Queues one message: written at once when wslay holds nothing, else through wslay.
    @usableFromInline
    func queue(opcode: UInt8, _ bytes: UnsafeRawBufferPointer) {
        guard let context, !isFinished, !abandoned, wslay_event_get_close_sent(context) == 0 else { return }
        if !isClient, opcode == 1, wslay_event_get_queued_msg_count(context) == 0,
           wslay_event_get_write_enabled(context) != 0 {
            // With nothing queued in wslay, the frame it would build (one unmasked frame
            // with FIN set, RFC 6455 section 5.2) is written here directly: the same
            // bytes without wslay's copy of the message, and wslay's state is left as it was.
            connection.write { output in
                FrameHeader.append(opcode: opcode, masked: false, length: UInt64(bytes.count), to: &output)
                output.append(contentsOf: bytes)
            }
            textMessagesSent += 1
            noteMessageEnd()
            return
        }
        var message = wslay_event_msg(opcode: opcode, msg: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                      msg_length: bytes.count)
        let status = wslay_event_queue_msg(context, &message)
        guard status == 0 else { return }  // writing was shut down (a stalled session): nothing is sent
        if opcode == 1 { textMessagesSent += 1 }
        flush()
        if opcode == 1 { noteMessageEnd() }
    }

    /// Under latency, where the text message just written ends in the connection's
    /// output: what ``textMessagesCrossed()`` counts with. (The latency holds output only
    /// while it is on: switching it off lets what it held cross.)
    private func noteMessageEnd() {
        guard connection.latencyMs != nil || !messageEnds.isEmpty else { return }
        messageEnds.append(connection.bytesWritten)
    }

    /// Text messages sent whose bytes have crossed the connection's latency (all of
    /// them without one): what the peer can have received.
    public func textMessagesCrossed() -> Int {
        let crossed = connection.bytesWritten - connection.bytesNotCrossed
        let arrived = messageEnds.prefix { $0 <= crossed }.count
        messageEnds.removeFirst(arrived)
        return textMessagesSent - messageEnds.count
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
        // Nothing more is delivered once reading was shut down (a refusal in the frame
        // that completes this message).
        guard let context, wslay_event_get_read_enabled(context) != 0 || message.opcode >= 8 else { return }
        let payload = UnsafeRawBufferPointer(start: message.msg, count: message.msg_length)
        if message.opcode == 1 { textMessagesReceived += 1 }
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
    func flush() {
        guard let context, !isFinished, !abandoned, connection.state == .open else { return }
        if holdsCloseAnswer(context) { return }
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
            if holdsTCPClose() { return }
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
        cancelSlowClose()
        if isClient { connection.loop.clientSockets.remove(self) }
        connection.loop.clock.cancel(closeTimer)
        var info = CloseInfo(abnormal: nil)
        if let context {
            if let code = closeCodeSentDirectly {
                info.sent = code
            } else if wslay_event_get_close_sent(context) != 0 {
                info.sent = wslay_event_get_status_code_sent(context)
            }
            // After a refusal, a close frame from the peer (if any) was not a valid one.
            if refusal == nil, wslay_event_get_close_received(context) != 0 {
                info.received = wslay_event_get_status_code_received(context)
            } else if refusal == nil {
                info.received = registeredCloseReceived
            }
            wslay_event_context_free(context)
            self.context = nil
        }
        if info.sent == nil || info.received == nil { info.abnormal = refusal ?? abnormal ?? "stream ended" }
        let onClosed = self.onClosed
        self.onText = nil
        self.onBinary = nil
        self.onControlFrame = nil
        self.onClosed = nil
        onClosed?(info)
    }
}

/// Follows frame boundaries in what the peer sends, to see each frame header as soon as
/// it is complete. wslay compares a frame's length with the message limit only when the
/// first payload byte has arrived, so a header announcing 2^62 bytes followed by silence
/// would otherwise hold the connection open until the application gives up on it.
struct FrameHeaderWatch {
    private var header: [UInt8] = []
    private var payloadLeft: UInt64 = 0
    /// Payload announced so far for the data message being received.
    private var messageBytes: UInt64 = 0

    /// Where the first close frame's header starts in the bytes last scanned (0 when it
    /// began in an earlier read); nil when they hold none.
    private(set) var closeFrameStart: Int?

    /// Scans `bytes`; returns true, and stops, at a data frame header that takes its
    /// message over `limit` bytes.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, limit: UInt64) -> Bool {
        closeFrameStart = nil
        var index = 0
        var partialStart = 0
        while index < bytes.count {
            if payloadLeft > 0 {
                let skipped = min(payloadLeft, UInt64(bytes.count - index))
                index += Int(skipped)
                payloadLeft -= skipped
                continue
            }
            let frame: (opcode: UInt8, length: UInt64, size: Int)
            let start: Int
            if header.isEmpty, let whole = Self.header(in: UnsafeRawBufferPointer(rebasing: bytes[index...])) {
                // The usual case: the whole header is in this read, nothing is copied.
                (frame, start) = (whole, index)
                index += whole.size
            } else {
                if header.isEmpty { partialStart = index }
                header.append(bytes[index])
                index += 1
                guard let whole = Self.header(in: header) else { continue }
                (frame, start) = (whole, partialStart)
                header.removeAll(keepingCapacity: true)
            }
            payloadLeft = frame.length
            switch frame.opcode {
            case 0:
                let (sum, overflow) = messageBytes.addingReportingOverflow(frame.length)
                messageBytes = overflow ? .max : sum
            case 1, 2: messageBytes = frame.length
            case 8:
                if closeFrameStart == nil { closeFrameStart = start }
                continue
            default: continue  // other control and reserved opcodes: wslay's business
            }
            if messageBytes > limit { return true }
        }
        return false
    }

    /// The opcode, payload length and header size of the frame header at the start of
    /// `bytes`, if `bytes` holds all of it.
    private static func header(in bytes: some RandomAccessCollection<UInt8>) -> (opcode: UInt8, length: UInt64, size: Int)? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[bytes.startIndex], second = bytes[bytes.index(after: bytes.startIndex)]
        let code = second & 0x7F
        let lengthBytes = code == 127 ? 8 : code == 126 ? 2 : 0
        let size = 2 + lengthBytes + (second & 0x80 != 0 ? 4 : 0)
        guard bytes.count >= size else { return nil }
        let lengthStart = bytes.index(bytes.startIndex, offsetBy: 2)
        let length = lengthBytes == 0 ? UInt64(code)
            : bytes[lengthStart..<bytes.index(lengthStart, offsetBy: lengthBytes)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (first & 0x0F, length, size)
    }
}
