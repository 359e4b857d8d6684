import CLibUV
import MockChatCore

/// A TCP stream on an ``EventLoop``.
///
/// The libuv handle lives in its own allocation and keeps this object alive (one
/// retain held in `handle.data`) until its close callback has run; only then is the
/// memory released. Every write copies its bytes into a request that owns them until
/// libuv reports completion.
public final class TCPConnection: HandleOwner {
    /// Where the connection is in its life.
    public enum State: Sendable, Equatable { case open, closing, closed }

    public let loop: EventLoop
    let handle: UnsafeMutablePointer<uv_tcp_t>
    @exclusivity(unchecked) public private(set) var state = State.open
    /// The local and remote addresses, once connected.
    public private(set) var localAddress: SocketAddress?
    public private(set) var remoteAddress: SocketAddress?

    /// Bytes that arrived; the buffer is valid only during the call.
    @exclusivity(unchecked) public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// The peer ended the stream (nil) or the stream failed. The connection is still
    /// open; the owner decides when to close it.
    public var onEnd: ((UVError?) -> Void)?
    /// The handle is closed and its memory released.
    public var onClosed: (() -> Void)?
    /// A queued write completed and nothing is left queued: a writer that stopped at a
    /// bound on ``queuedWriteBytes`` may go on.
    public var onWritesDrained: (() -> Void)?

    // Bookkeeping for ``TrafficLedger``.
    @exclusivity(unchecked) var peerIsLocal = false
    var bytesSentToPeer = 0
    var bytesReadFromPeer = 0
    var awaitingEndOfStream = false
    var bytesExpectedFromClosedPeer: Int?
    var endpoints: EndpointPair? {
        guard let localAddress, let remoteAddress else { return nil }
        return EndpointPair(local: localAddress, remote: remoteAddress)
    }

    init(loop: EventLoop) {
        self.loop = loop
        handle = .allocate(capacity: 1)
        uv_tcp_init(loop.uv, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// Bytes written and not yet handed to the kernel: queued in libuv, or pending
    /// until the end of the loop turn when writes are coalesced.
    public var queuedWriteBytes: Int {
        pendingOutput.count + sliced.pending + (silenced?.output.count ?? 0) + delayedOut.byteCount
            + handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { uv_stream_get_write_queue_size($0) }
    }

    /// Bytes written that have not crossed the latency yet (nor left the coalescer).
    public var bytesNotCrossed: Int { pendingOutput.count + delayedOut.byteCount }

    /// Bytes the kernel has received on this socket that have not been read yet (0 when
    /// the socket is closed or the count is unavailable). A loop that stalled, or a timer
    /// that fires before the poll phase, can see input here that is already on its way.
    public var unreadKernelBytes: Int {
        var descriptor: uv_os_fd_t = -1
        let status = handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_fileno($0, &descriptor) }
        guard status == 0, descriptor >= 0 else { return 0 }
        return HostSystem.unreadBytes(Int32(descriptor)) ?? 0
    }

    /// When true, what is written during one turn of the loop goes to the kernel in one
    /// piece at the end of the turn (see `WriteCoalescer`), or as soon as 64 KiB have
    /// gathered. What is written while `onRead` runs (the replies to what was read)
    /// leaves when `onRead` returns: one write per read, however many requests it held,
    /// and no reply waits for the rest of the turn. Closing writes what is pending
    /// first. Off by default.
    @exclusivity(unchecked) public var coalescesWrites = false
    @exclusivity(unchecked) private var pendingOutput: [UInt8] = []
    @exclusivity(unchecked) private var isWaitingForFlush = false
    /// True while `onRead` runs: what it writes leaves when it returns, without a turn
    /// in the coalescer's queue.
    @exclusivity(unchecked) private var isDelivering = false
    private static let coalesceLimit = 64 * 1024

    /// Cuts what this connection writes into small writes, as a fragmenting network
    /// would (see ``WriteSlicing``); nil, the default, writes everything at once. Set to
    /// nil, it writes what it still holds at once.
    public var slicing: WriteSlicing? {
        didSet { if slicing == nil { releaseSlicedOutput() } }
    }
    @exclusivity(unchecked) var sliced = SlicedOutput()
    /// Not nil while the connection is silent (see ``silence()``): what it holds back.
    @exclusivity(unchecked) var silenced: SilencedTraffic?
    /// Delays every byte and stream event by this many milliseconds of clock time in
    /// each direction, as a network path with that latency would: what is written, what
    /// is read, the peer's end of stream and this side's closes cross in order, each
    /// that long after it happened. Set to nil, what is held crosses at once.
    public var latencyMs: Int64? {
        didSet { if latencyMs == nil, oldValue != nil { releaseDelayed() } }
    }
    var delayedIn = DelayedTraffic()
    var delayedOut = DelayedTraffic()
    /// Bytes given to ``write(_:)`` so far: with what is still held back before the
    /// latency lets it cross, the owner can tell which of its messages crossed.
    public private(set) var bytesWritten = 0

    /// Opens a connection to `address`; `completion` runs on the loop, never inline.
    ///
    /// With `source`, the socket is bound to that local address first: a load generator
    /// spreads connections over several loopback addresses this way (see
    /// ``bind(to:)`` for how the port is chosen).
    public static func connect(
        on loop: EventLoop, to address: SocketAddress, from source: SocketAddress? = nil,
        completion: @escaping (Result<TCPConnection, UVError>) -> Void
    ) {
        let connection = TCPConnection(loop: loop)
        let request = ConnectRequest(connection: connection, completion: completion)
        do throws(UVError) {
            if let source { try connection.bind(to: source) }
            var storage = try address.storage()
            let status = withUnsafePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                    uv_tcp_connect(request.request, connection.handle, sockaddr) { request, status in
                        guard let request, let owner = request.pointee.data else { return }
                        Unmanaged<ConnectRequest>.fromOpaque(owner).takeRetainedValue().complete(status)
                    }
                }
            }
            guard status == 0 else { throw UVError(status, "uv_tcp_connect") }
            loop.traffic.began()
            request.request.pointee.data = Unmanaged.passRetained(request).toOpaque()
        } catch {
            request.request.deallocate()
            connection.close()
            // Report on a later loop turn: callbacks never complete synchronously.
            loop.deferToLoop { completion(.failure(error)) }
        }
    }

    /// Binds the socket to `source` with `IP_BIND_ADDRESS_NO_PORT`, so the kernel picks
    /// the port in `connect`, where only the four-tuple must be unique: O(1) per
    /// connection. A bind that picked it would search the address's ports for one no
    /// other socket holds, at a cost that grows with the connections already open from
    /// that address (with 14,000 open, most of a load generator's time).
    private func bind(to source: SocketAddress) throws(UVError) {
        var local = try source.storage()
        let descriptor = HostSystem.streamSocket(family: Int32(local.ss_family))
        guard descriptor >= 0 else { throw UVError(-errno, "socket") }
        HostSystem.choosePortAtConnect(descriptor)
        let opened = uv_tcp_open(handle, descriptor)
        guard opened == 0 else {
            HostSystem.closeDescriptor(descriptor)
            throw UVError(opened, "uv_tcp_open")
        }
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_bind(handle, $0, 0) }
        }
        guard bound == 0 else { throw UVError(bound, "uv_tcp_bind(\(source))") }
    }

    /// Queues `bytes` for sending.
    ///
    /// The bytes are first offered to the kernel directly (`uv_try_write`, which
    /// refuses while earlier writes are still queued, so order is kept); whatever it
    /// does not take at once is copied into a write request as before. Errors are
    /// always reported the queued way, through `onEnd`, never from this call.
    public func write(_ bytes: some Collection<UInt8>) {
        guard state == .open, !bytes.isEmpty else { return }
        bytesWritten += bytes.count
        guard coalescesWrites, loop.coalescer.isAvailable else {
            release(bytes)
            return
        }
        pendingOutput.append(contentsOf: bytes)
        pendingOutputGrew()
    }

    /// Queues the bytes `fill` appends to the buffer it is given: when writes are
    /// coalesced, the output pending for this connection itself, so nothing is copied on
    /// the way. Otherwise the same as ``write(_:)``.
    public func write(appending fill: (inout [UInt8]) -> Void) {
        guard state == .open else { return }
        guard coalescesWrites, loop.coalescer.isAvailable else {
            var bytes: [UInt8] = []
            fill(&bytes)
            bytesWritten += bytes.count
            if !bytes.isEmpty { release(bytes) }
            return
        }
        let before = pendingOutput.count
        fill(&pendingOutput)
        bytesWritten += pendingOutput.count - before
        if pendingOutput.count > before { pendingOutputGrew() }
    }

    /// Schedules the flush of what was just added to `pendingOutput`.
    private func pendingOutputGrew() {
        if !isWaitingForFlush, !isDelivering {
            isWaitingForFlush = true
            loop.coalescer.enqueue(self)
        }
        if pendingOutput.count >= Self.coalesceLimit { flushPendingOutput() }
    }

    /// Hands what is pending to the kernel (called at the end of the loop turn).
    func flushPendingOutput() {
        isWaitingForFlush = false
        guard !pendingOutput.isEmpty else { return }
        if state == .open { release(pendingOutput) }
        // Keep a small buffer for the next turn; let a large one go.
        if pendingOutput.capacity > 4096 {
            pendingOutput = []
        } else {
            pendingOutput.removeAll(keepingCapacity: true)
        }
    }

    /// Hands bytes on to the kernel, behind the latency and through the slicing if
    /// there are.
    private func release(_ bytes: some Collection<UInt8>) {
        guard latencyMs == nil else {
            delay(.bytes(Array(bytes)), inbound: false)
            return
        }
        releaseUndelayed(bytes)
    }

    /// Hands bytes on to the kernel, through the slicing if there is one.
    func releaseUndelayed(_ bytes: some Collection<UInt8>) {
        if silenced != nil {
            silenced?.output.append(contentsOf: bytes)
            return
        }
        guard slicing != nil else {
            writeNow(bytes)
            return
        }
        writeSliced(bytes)
    }

    /// Offers bytes to the kernel and queues what it does not take.
    func writeNow(_ bytes: some Collection<UInt8>) {
        let sent = tryWrite(bytes)
        if sent > 0 { _ = loop.traffic.wrote(sent, by: self) }
        guard sent < bytes.count else { return }
        queueWrite(bytes.dropFirst(sent))
    }

    /// Writes what the kernel takes now without blocking; 0 on any error.
    private func tryWrite(_ bytes: some Collection<UInt8>) -> Int {
        let written: Int32? = bytes.withContiguousStorageIfAvailable { buffer in
            var slice = uv_buf_t(base: UnsafeMutableRawPointer(mutating: buffer.baseAddress)?
                                    .assumingMemoryBound(to: CChar.self), len: buffer.count)
            return handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { uv_try_write($0, &slice, 1) }
        }
        return max(0, Int(written ?? 0))
    }

    /// Copies `bytes` into a write request that libuv completes later.
    private func queueWrite(_ bytes: some Collection<UInt8>) {
        let request = WriteRequest(connection: self, bytes: bytes)
        let counted = loop.traffic.wrote(bytes.count, by: self)
        request.counted = counted
        var buffer = uv_buf_t(base: request.storage.baseAddress?.assumingMemoryBound(to: CChar.self),
                              len: request.storage.count)
        request.request.pointee.data = Unmanaged.passRetained(request).toOpaque()
        loop.traffic.began()
        let status = handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { stream in
            uv_write(request.request, stream, &buffer, 1) { request, status in
                guard let request, let owner = request.pointee.data else { return }
                Unmanaged<WriteRequest>.fromOpaque(owner).takeRetainedValue().complete(status)
            }
        }
        if status != 0 {
            // libuv did not take the request: undo its retain and bookkeeping here.
            Unmanaged<WriteRequest>.fromOpaque(request.request.pointee.data!).release()
            request.request.deallocate()
            request.storage.deallocate()
            loop.traffic.ended()
            loop.deferToLoop { [weak self] in self?.onEnd?(UVError(status, "uv_write")) }
        }
    }

    /// Stops delivering `onRead` (back-pressure).
    public func pauseReading() {
        guard state == .open else { return }
        handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { _ = uv_read_stop($0) }
    }

    /// Resumes delivering `onRead`.
    public func resumeReading() {
        guard state == .open else { return }
        handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { stream in
            _ = uv_read_start(stream, { handle, suggested, buffer in
                guard let handle, let buffer else { return }
                let loop = EventLoop.owning(handle.pointee.loop)
                buffer.pointee = uv_buf_t(base: loop.readBuffer.assumingMemoryBound(to: CChar.self),
                                          len: EventLoop.readBufferSize)
            }, { stream, count, buffer in
                guard let stream, let owner = stream.pointee.data else { return }
                let connection = Unmanaged<TCPConnection>.fromOpaque(owner).takeUnretainedValue()
                connection.didRead(count: count, buffer: buffer)
            })
        }
    }

    /// Sends what is queued, then closes. The peer sees an orderly end of stream.
    public func closeAfterWrites() {
        guard state == .open else { return }
        if holdsClose(.afterWrites) || delaysClose(.afterWrites) { return }
        shutDownAfterWrites()
    }

    /// Carries out a close that has crossed the latency (unless a silence holds it).
    func closeUndelayed(_ close: SilencedTraffic.Close) {
        guard state == .open, !holdsClose(close) else { return }
        switch close {
        case .afterWrites: shutDownAfterWrites()
        case .now: beginClose { handle in uv_close(handle, TCPConnection.didClose) }
        case .reset: beginReset()
        }
    }

    private func shutDownAfterWrites() {
        flushPendingOutput()
        if sliced.pending > 0 {
            // The sliced bytes go first; the last of them closes.
            sliced.closeWhenDrained = true
            return
        }
        let request = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        loop.traffic.began()
        let status = handle.withMemoryRebound(to: uv_stream_t.self, capacity: 1) { stream in
            uv_shutdown(request, stream) { request, _ in
                guard let request, let owner = request.pointee.data else { return }
                let connection = Unmanaged<TCPConnection>.fromOpaque(owner).takeRetainedValue()
                request.deallocate()
                connection.loop.traffic.ended()
                connection.close()
            }
        }
        if status != 0 {
            Unmanaged<TCPConnection>.fromOpaque(request.pointee.data!).release()
            request.deallocate()
            loop.traffic.ended()
            close()
        }
    }

    /// Writes what the kernel takes of `bytes` now, discards what the peer has sent so
    /// far, and closes: the descriptor is free when this returns. For a short refusal
    /// when descriptors are scarce: ``closeAfterWrites()`` keeps the descriptor until a
    /// later turn of the loop, and a burst of connections accepted in one turn would run
    /// out of them (libuv then accepts and closes the rest with no answer at all). What
    /// was read is discarded so that the close ends the stream in order, not with a
    /// reset that could take the reply with it.
    public func writeAndCloseNow(_ bytes: [UInt8]) {
        guard state == .open else { return }
        let sent = tryWrite(bytes)
        if sent > 0 { _ = loop.traffic.wrote(sent, by: self) }
        var descriptor: uv_os_fd_t = -1
        let status = handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_fileno($0, &descriptor) }
        if status == 0, descriptor >= 0 {
            var scratch = [UInt8](repeating: 0, count: 4096)
            while HostSystem.unreadBytes(Int32(descriptor)).map({ $0 > 0 }) == true,
                  scratch.withUnsafeMutableBytes({ recv(Int32(descriptor), $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        }
        close()
    }

    /// Closes at once; queued writes are dropped.
    public func close() {
        if holdsClose(.now) || delaysClose(.now) { return }
        beginClose { handle in uv_close(handle, TCPConnection.didClose) }
    }

    /// Closes at once with a TCP reset, as a crashed or killed peer would.
    public func reset() {
        if holdsClose(.reset) || delaysClose(.reset) { return }
        beginReset()
    }

    private func beginReset() {
        beginClose { _ in
            if uv_tcp_close_reset(self.handle, TCPConnection.didClose) != 0 {
                self.handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) {
                    uv_close($0, TCPConnection.didClose)
                }
            }
        }
    }

    func closeForShutdown() {
        discardDelayed()
        latencyMs = nil
        silenced = nil
        close()
    }

    // MARK: internals

    func didConnect() {
        // Connected and accepted alike: without it, a second small write that follows
        // one the peer has not answered waits for a delayed ACK (about 40 ms).
        uv_tcp_nodelay(handle, 1)
        localAddress = Self.address(of: handle, peer: false)
        remoteAddress = Self.address(of: handle, peer: true)
        loop.traffic.register(self)
    }

    private func didRead(count: Int, buffer: UnsafePointer<uv_buf_t>?) {
        if count > 0, let base = buffer?.pointee.base {
            if peerIsLocal { loop.traffic.read(count, by: self) }
            let bytes = UnsafeRawBufferPointer(start: base, count: count)
            if latencyMs != nil {
                delay(.bytes(Array(bytes)), inbound: true)
            } else {
                deliver(bytes)
            }
        } else if count < 0 {
            pauseReading()
            loop.traffic.observedEndOfStream(self)
            let error = count == Int(UV_EOF.rawValue) ? nil : UVError(Int32(count), "read")
            if latencyMs != nil {
                delay(.end(error), inbound: true)
            } else {
                reportEnd(error)
            }
        }
    }

    /// Reports the peer's end of stream or a failure, unless a silence holds it.
    func reportEnd(_ error: UVError?) {
        if holdsEnd(error) { return }
        onEnd?(error)
    }

    /// Hands bytes read to ``onRead``; what it writes leaves when it returns.
    func deliver(_ bytes: UnsafeRawBufferPointer) {
        // With nothing pending, the replies gather in the loop's buffer, warm in the
        // cache, rather than in this connection's own; it is handed back emptied.
        let borrows = coalescesWrites && pendingOutput.isEmpty
        if borrows { swap(&pendingOutput, &loop.replyBuffer) }
        isDelivering = true
        onRead?(bytes)
        isDelivering = false
        if !pendingOutput.isEmpty { flushPendingOutput() }
        if borrows { swap(&pendingOutput, &loop.replyBuffer) }
    }

    private func beginClose(_ start: (UnsafeMutablePointer<uv_handle_t>) -> Void) {
        guard state == .open else { return }
        // What was written before the close goes out first, as it would have uncoalesced.
        flushPendingOutput()
        sliced = SlicedOutput()
        discardDelayed()
        state = .closing
        loop.traffic.observedEndOfStream(self)
        loop.traffic.unregister(self)
        loop.traffic.began()
        handle.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { start($0) }
    }

    private static let didClose: uv_close_cb = { handle in
        guard let handle, let owner = handle.pointee.data else { return }
        let connection = Unmanaged<TCPConnection>.fromOpaque(owner).takeRetainedValue()
        connection.state = .closed
        connection.loop.traffic.ended()
        let onClosed = connection.onClosed
        connection.onRead = nil
        connection.onEnd = nil
        connection.onClosed = nil
        handle.deallocate()
        onClosed?()
    }

    static func address(of handle: UnsafeMutablePointer<uv_tcp_t>, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? uv_tcp_getpeername(handle, $0, &length) : uv_tcp_getsockname(handle, $0, &length)
            }
        }
        guard status == 0 else { return nil }
        return withUnsafePointer(to: &storage) { SocketAddress($0) }
    }
}

/// A pending `uv_write`: owns its bytes until libuv calls back.
private final class WriteRequest {
    let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
    let storage: UnsafeMutableRawBufferPointer
    let connection: TCPConnection
    var counted = false

    init(connection: TCPConnection, bytes: some Collection<UInt8>) {
        self.connection = connection
        storage = .allocate(byteCount: bytes.count, alignment: 1)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
    }

    func complete(_ status: Int32) {
        request.deallocate()
        storage.deallocate()
        connection.loop.traffic.ended()
        if status < 0, status != UV_ECANCELED.rawValue, connection.state == .open {
            if connection.holdsEnd(UVError(status, "uv_write")) { return }
            connection.onEnd?(UVError(status, "uv_write"))
        } else if let drained = connection.onWritesDrained, connection.state == .open, connection.queuedWriteBytes == 0 {
            drained()
        }
    }
}

/// A pending `uv_tcp_connect`.
private final class ConnectRequest {
    let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
    let connection: TCPConnection
    let completion: (Result<TCPConnection, UVError>) -> Void

    init(connection: TCPConnection, completion: @escaping (Result<TCPConnection, UVError>) -> Void) {
        self.connection = connection
        self.completion = completion
    }

    func complete(_ status: Int32) {
        request.deallocate()
        connection.loop.traffic.ended()
        guard status == 0, connection.state == .open else {
            connection.close()
            completion(.failure(UVError(status == 0 ? UV_ECANCELED.rawValue : status, "connect")))
            return
        }
        connection.didConnect()
        connection.resumeReading()
        completion(.success(connection))
    }
}
