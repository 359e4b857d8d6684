/// How a connection's writes are cut, as a fragmenting network or a small send buffer
/// would: each write to the kernel carries at most `sliceBytes` bytes, and each slice
/// waits for a turn of the loop of its own, so a peer on the same loop reads each
/// slice on its own. Slices wait for no clock: a settled loop has written them all.
public struct WritePacing: Sendable, Equatable {
    public var sliceBytes: Int

    public init(sliceBytes: Int) {
        self.sliceBytes = max(1, sliceBytes)
    }
}

/// Bytes held back by a ``WritePacing``.
struct PacedOutput {
    var bytes: [UInt8] = []
    var start = 0
    var isWaitingForTurn = false
    var closeWhenDrained = false
    var pending: Int { bytes.count - start }
}

extension TCPConnection {
    /// Queues bytes behind the pacing; the next turn of the loop writes the first slice.
    func writePaced(_ bytes: some Collection<UInt8>) {
        if paced.start > 65_536 {
            paced.bytes.removeFirst(paced.start)
            paced.start = 0
        }
        paced.bytes.append(contentsOf: bytes)
        if !paced.isWaitingForTurn { waitForTurn() }
    }

    private func waitForTurn() {
        paced.isWaitingForTurn = true
        loop.deferToLoop { [weak self] in
            guard let self, self.paced.isWaitingForTurn else { return }
            self.paced.isWaitingForTurn = false
            self.writeSlice()
        }
    }

    /// Writes one slice, then waits for the next turn, or closes once drained if asked to.
    private func writeSlice() {
        guard state == .open, let pacing else { return }
        let count = min(paced.pending, pacing.sliceBytes)
        writeNow(paced.bytes[paced.start..<(paced.start + count)])
        paced.start += count
        if paced.pending > 0 {
            waitForTurn()
            return
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
        let held = paced
        paced = PacedOutput()
        guard state == .open else { return }
        if held.pending > 0 { writeNow(held.bytes[held.start...]) }
        if held.closeWhenDrained { closeAfterWrites() }
    }
}
