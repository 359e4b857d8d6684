/// Splits a byte stream into `\n`-terminated lines in time linear in its length
/// (each byte is looked at once), refusing lines longer than ``limit``: a driver's
/// stdout is read this way (docs/DRIVER.md, "Transports").
struct LineSplitter {
    /// What the stream holds.
    enum Piece: Equatable {
        /// One line, without its newline.
        case line([UInt8])
        /// A line longer than the limit; its bytes up to the next newline are dropped.
        case overlong
    }

    /// The longest line taken, in bytes, without its newline.
    let limit: Int
    private var pending: [UInt8] = []
    /// Inside an over-long line: bytes are dropped until its newline.
    private var discarding = false

    init(limit: Int) { self.limit = limit }

    /// Takes the next bytes of the stream; passes each piece they complete.
    mutating func push(_ bytes: some Collection<UInt8>, _ emit: (Piece) -> Void) {
        var start = bytes.startIndex
        while start != bytes.endIndex {
            let newline = bytes[start...].firstIndex(of: 10)
            let segment = bytes[start..<(newline ?? bytes.endIndex)]
            if !discarding {
                if pending.count + segment.count > limit {
                    pending = []
                    discarding = true
                    emit(.overlong)
                } else {
                    pending.append(contentsOf: segment)
                }
            }
            guard let newline else { return }
            if !discarding { emit(.line(pending)) }
            pending = []
            discarding = false
            start = bytes.index(after: newline)
        }
    }

    /// The stream has ended: a last line without a newline is passed too.
    mutating func finish(_ emit: (Piece) -> Void) {
        if !discarding, !pending.isEmpty { emit(.line(pending)) }
        pending = []
        discarding = false
    }
}
