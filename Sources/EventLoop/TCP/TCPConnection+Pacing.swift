/// How a connection's writes are shaped, as a slow or fragmenting network would.
///
/// - `sliceBytes`: each write to the kernel carries at most this many bytes. Without
///   a rate, each slice waits for a turn of the loop of its own, so a peer on the
///   same loop reads each slice on its own.
/// - `bytesPerSecond`: writes are spaced on the loop's ``Clock`` so that the bytes
///   leave at this rate (in writes of at most 10 ms worth, or of `sliceBytes`). With
///   the virtual clock, the bytes leave as the clock is advanced.
public struct WritePacing: Sendable, Equatable {
    public var sliceBytes: Int?
    public var bytesPerSecond: Int?

    public init(sliceBytes: Int? = nil, bytesPerSecond: Int? = nil) {
        self.sliceBytes = sliceBytes
        self.bytesPerSecond = bytesPerSecond
    }

    /// Bytes of the next write when `pending` are waiting.
    func chunk(of pending: Int) -> Int {
        let limit = sliceBytes ?? bytesPerSecond.map { max(1, $0 / 100) } ?? pending
        return min(pending, limit)
    }
}

/// Bytes held back by a ``WritePacing``.
struct PacedOutput {
    var bytes: [UInt8] = []
    var start = 0
    /// Clock time, in microseconds, before which the rate allows no further write.
    var nextWrite: Int64 = 0
    var timer: Clock.TimerID?
    var isWaitingForTurn = false
    var closeWhenDrained = false
    var pending: Int { bytes.count - start }
}

extension TCPConnection {
    /// Queues bytes behind the pacing and writes what it allows now.
    func writePaced(_ bytes: some Collection<UInt8>) {
        if paced.start > 65_536 {
            paced.bytes.removeFirst(paced.start)
            paced.start = 0
        }
        paced.bytes.append(contentsOf: bytes)
        guard paced.timer == nil, !paced.isWaitingForTurn else { return }
        if pacing?.bytesPerSecond == nil {
            // Slices only: even the first waits for a turn, so that no two share one.
            waitForTurn()
        } else {
            pumpPaced()
        }
    }

    private func waitForTurn() {
        paced.isWaitingForTurn = true
        loop.deferToLoop { [weak self] in
            self?.paced.isWaitingForTurn = false
            self?.pumpPaced()
        }
    }

    /// Writes paced bytes until the pacing says wait, then arranges to come back.
    private func pumpPaced() {
        guard state == .open, let pacing else { return }
        while paced.pending > 0 {
            let now = loop.clock.now.milliseconds * 1000
            if let rate = pacing.bytesPerSecond {
                // Less than a millisecond behind is the timer's rounding, not idle time.
                if paced.nextWrite < now - 1000 { paced.nextWrite = now }
                if paced.nextWrite > now {
                    paced.timer = loop.clock.schedule(at: Instant(milliseconds: (paced.nextWrite + 999) / 1000)) {
                        [weak self] in
                        self?.paced.timer = nil
                        self?.pumpPaced()
                    }
                    return
                }
                let count = pacing.chunk(of: paced.pending)
                writeNow(paced.bytes[paced.start..<(paced.start + count)])
                paced.start += count
                paced.nextWrite += Int64(count) * 1_000_000 / Int64(rate)
                continue
            }
            let count = pacing.chunk(of: paced.pending)
            writeNow(paced.bytes[paced.start..<(paced.start + count)])
            paced.start += count
            if paced.pending > 0 {
                waitForTurn()
                return
            }
        }
        paced.bytes.removeAll(keepingCapacity: true)
        paced.start = 0
        if paced.closeWhenDrained {
            paced.closeWhenDrained = false
            closeAfterWrites()
        }
    }

    /// Pacing was switched off: what it held leaves at once.
    func releasePacedOutput() {
        loop.clock.cancel(paced.timer)
        let held = paced
        paced = PacedOutput()
        guard state == .open else { return }
        if held.pending > 0 { writeNow(held.bytes[held.start...]) }
        if held.closeWhenDrained { closeAfterWrites() }
    }
}
