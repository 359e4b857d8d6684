import ChatProtocol

/// The entries a trace keeps in memory, oldest first: each entry's fields in a record of
/// fixed size and its frame's JSON text in one byte buffer that all frames share, so
/// keeping an entry makes no allocation of its own. The oldest entries go beyond
/// `capacity` entries or `byteLimit` bytes (``TraceStore/Record/memory``); dropped ones
/// are compacted away in bulk.
struct TraceStore {
    /// One kept entry.
    struct Record {
        /// The entry's fields; its ``TraceLog/Entry/frameText`` is nil, the frame is in `frames`.
        var entry: TraceLog.Entry
        /// Where the frame's text starts, counted from the first byte ever stored.
        var frameStart: Int
        /// The frame's length; -1 when the entry has no frame.
        var frameCount: Int
        /// What keeping the entry costs: the record, the frame's bytes and the entry's
        /// strings that live on the heap.
        var memory: Int
    }

    let capacity: Int
    let byteLimit: Int
    /// Kept entries are `records[head...]`.
    private(set) var records: [Record] = []
    private(set) var head = 0
    /// The frames' text; `frames[0]` is byte `framesBase` of all bytes ever stored.
    private(set) var frames: [UInt8] = []
    private(set) var framesBase = 0
    /// The memory the kept entries take.
    private(set) var bytes = 0

    init(capacity: Int, byteLimit: Int) {
        (self.capacity, self.byteLimit) = (capacity, byteLimit)
    }

    /// Whether entries are kept at all.
    var isKeeping: Bool { capacity > 0 && byteLimit > 0 }

    /// The kept entries as a collection.
    var entries: TraceLog.Entries { TraceLog.Entries(records: records[head...], frames: frames, framesBase: framesBase) }

    /// Keeps `entry` without a frame (or with its own ``TraceLog/Entry/frameText``, moved to the shared buffer).
    mutating func keep(_ entry: TraceLog.Entry) {
        guard let text = entry.frameText else { return append(entry, frameStart: frames.count, frameCount: -1) }
        keep(entry) { $0 += text }
    }

    /// Keeps `entry` with the frame text that `writeFrame` appends to the shared buffer.
    mutating func keep(_ entry: TraceLog.Entry, frame writeFrame: (inout [UInt8]) -> Void) {
        let start = frames.count
        writeFrame(&frames)
        append(entry, frameStart: start, frameCount: frames.count - start)
    }

    private mutating func append(_ entry: TraceLog.Entry, frameStart start: Int, frameCount: Int) {
        var entry = entry
        entry.frameText = nil
        let memory = MemoryLayout<Record>.stride + max(0, frameCount) + entry.stringMemoryCount
        records.append(Record(entry: entry, frameStart: framesBase + start, frameCount: frameCount, memory: memory))
        bytes += memory
        while records.count - head > capacity || bytes > byteLimit {
            bytes -= records[head].memory
            head += 1
        }
        if head > 1024, head * 2 > records.count {
            let firstKept = head < records.count ? records[head].frameStart : framesBase + frames.count
            frames.removeFirst(firstKept - framesBase)
            framesBase = firstKept
            records.removeFirst(head)
            head = 0
        }
    }
}

extension TraceLog {
    /// Kept entries, oldest first: each one is built (its frame's text copied out) when read.
    public struct Entries: RandomAccessCollection {
        let records: ArraySlice<TraceStore.Record>
        let frames: [UInt8]
        let framesBase: Int

        public var startIndex: Int { records.startIndex }
        public var endIndex: Int { records.endIndex }

        public subscript(position: Int) -> Entry {
            var entry = records[position].entry
            entry.frameText = frame(at: position).map(Array.init)
            return entry
        }

        /// The entries from `start` on, at most `limit` of them.
        func prefix(from start: Int, limit: Int) -> Entries {
            Entries(records: records[start..<(start + Swift.max(0, Swift.min(limit, endIndex - start)))], frames: frames, framesBase: framesBase)
        }

        /// The frame's text of the entry at `position`, in place.
        func frame(at position: Int) -> ArraySlice<UInt8>? {
            let record = records[position]
            guard record.frameCount >= 0 else { return nil }
            let start = record.frameStart - framesBase
            return frames[start..<(start + record.frameCount)]
        }

        /// Appends the entries' JSON lines to `bytes`, each frame's text copied once.
        func appendLines(to bytes: inout [UInt8]) {
            for position in indices {
                records[position].entry.serialize(into: &bytes, frame: frame(at: position))
                bytes.append(10)
            }
        }
    }
}
