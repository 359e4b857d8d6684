/// How a connection's writes are cut, as a fragmenting network or a small send buffer
/// would: each write to the kernel carries at most `sliceBytes` bytes, and each slice
/// waits for a turn of the loop of its own, so a peer on the same loop reads each
/// slice on its own. Slices wait for no clock: a settled loop has written them all.
public struct WriteSlicing: Sendable, Equatable {
    public var sliceBytes: Int

    public init(sliceBytes: Int) {
        self.sliceBytes = max(1, sliceBytes)
    }
}

/// Bytes held back by a ``WriteSlicing``.
struct SlicedOutput {
    var bytes: [UInt8] = []
    var start = 0
    var isWaitingForTurn = false
    var closeWhenDrained = false
    var pending: Int { bytes.count - start }
}

extension TCPConnection {
    /// Queues bytes behind the slicing; the next turn of the loop writes the first slice.
    func writeSliced(_ bytes: some Collection<UInt8>) {
        if sliced.start > 65_536 {
            sliced.bytes.removeFirst(sliced.start)
            sliced.start = 0
        }
        sliced.bytes.append(contentsOf: bytes)
        if !sliced.isWaitingForTurn { waitForTurn() }
    }

    private func waitForTurn() {
        sliced.isWaitingForTurn = true
        loop.deferToLoop { [weak self] in
            guard let self, self.sliced.isWaitingForTurn else { return }
            self.sliced.isWaitingForTurn = false
            self.writeSlice()
        }
    }

    /// Writes one slice, then waits for the next turn, or closes once drained if asked to.
    private func writeSlice() {
        guard state == .open, let slicing else { return }
        let count = min(sliced.pending, slicing.sliceBytes)
        writeNow(sliced.bytes[sliced.start..<(sliced.start + count)])
        sliced.start += count
        if sliced.pending > 0 {
            waitForTurn()
            return
        }
        sliced.bytes.removeAll(keepingCapacity: true)
        sliced.start = 0
        if sliced.closeWhenDrained {
            sliced.closeWhenDrained = false
            closeAfterWrites()
        }
    }

    /// Slicing was switched off: what it held leaves at once.
    func releaseSlicedOutput() {
        let held = sliced
        sliced = SlicedOutput()
        guard state == .open else { return }
        if held.pending > 0 { writeNow(held.bytes[held.start...]) }
        if held.closeWhenDrained { closeAfterWrites() }
    }
}
