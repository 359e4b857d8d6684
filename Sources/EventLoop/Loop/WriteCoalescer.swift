import CLibUV

/// Gathers the writes of one loop turn so that each connection makes one system call.
///
/// A connection with ``TCPConnection/coalescesWrites`` set appends what it writes to
/// its own pending buffer and registers here once per turn. The buffers are handed to
/// the kernel in the order the connections first wrote, from a check handle (right
/// after the turn's I/O callbacks) or a prepare handle (right before the loop would
/// block, for writes made by timers or close callbacks). A server fanning events out
/// to many subscribers thus sends several frames per write when it is busy, and one
/// frame per write, with no added delay, when it is not.
///
/// Pending output counts as an operation in flight for ``TrafficLedger``, so
/// ``EventLoop/settle(timeout:)`` never returns before it is written.
final class WriteCoalescer: HandleOwner {
    private unowned let loop: EventLoop
    private let prepare: UnsafeMutablePointer<uv_prepare_t>
    private let check: UnsafeMutablePointer<uv_check_t>
    private var waiting: [TCPConnection] = []
    private var isArmed = false
    private var isClosed = false

    init(loop: EventLoop) {
        self.loop = loop
        prepare = .allocate(capacity: 1)
        check = .allocate(capacity: 1)
        uv_prepare_init(loop.uv, prepare)
        uv_check_init(loop.uv, check)
        let owner = Unmanaged.passUnretained(self).toOpaque()
        prepare.pointee.data = owner
        check.pointee.data = owner
    }

    /// Whether a connection may defer its writes (not once the loop is shutting down).
    var isAvailable: Bool { !isClosed }

    /// Schedules `connection`'s pending output for the end of this turn.
    func enqueue(_ connection: TCPConnection) {
        waiting.append(connection)
        loop.traffic.began()
        guard !isArmed else { return }
        isArmed = true
        uv_prepare_start(prepare) { handle in
            guard let owner = handle?.pointee.data else { return }
            Unmanaged<WriteCoalescer>.fromOpaque(owner).takeUnretainedValue().flushAll()
        }
        uv_check_start(check) { handle in
            guard let owner = handle?.pointee.data else { return }
            Unmanaged<WriteCoalescer>.fromOpaque(owner).takeUnretainedValue().flushAll()
        }
    }

    /// Writes every pending buffer, in the order the connections registered.
    func flushAll() {
        while !waiting.isEmpty {
            let batch = waiting
            waiting = []
            for connection in batch {
                connection.flushPendingOutput()
                loop.traffic.ended()
            }
        }
        guard isArmed else { return }
        isArmed = false
        uv_prepare_stop(prepare)
        uv_check_stop(check)
    }

    func closeForShutdown() {
        guard !isClosed else { return }
        flushAll()
        isClosed = true
        prepare.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_close($0) { $0?.deallocate() } }
        check.withMemoryRebound(to: uv_handle_t.self, capacity: 1) { uv_close($0) { $0?.deallocate() } }
    }
}
