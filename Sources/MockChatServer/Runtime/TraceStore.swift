import ChatProtocol
import MockChatCore

/// The entries a trace keeps in memory, oldest first: each entry's numbers in a record of
/// fixed size holding no reference, and its strings and frame's JSON text in one byte
/// buffer that all entries share, so keeping an entry makes no allocation and retains
/// nothing. The oldest entries go beyond `capacity` entries or `byteLimit` bytes
/// (``TraceStore/Record/memory``); dropped ones are compacted away in bulk.
struct TraceStore {
    /// One kept entry: ``TraceLog/Entry`` without its strings and frame, which are
    /// `bytes` of the shared buffer from `start` on, one after the other.
    struct Record {
        var sequence: Int
        var time: Instant
        var connection: ConnectionID?
        var code: UInt16?
        var kind: TraceLog.Kind
        /// Where the entry's bytes start, counted from the first byte ever stored.
        var start: Int
        /// The UTF-8 lengths of uid, deviceId, route and text, then the frame's length;
        /// -1 for a field the entry does not have.
        var counts: (Int32, Int32, Int32, Int32, Int32)

        /// The length of field 0 to 4 of ``counts`` (-1: absent).
        func count(_ field: Int) -> Int {
            switch field {
            case 0: Int(counts.0)
            case 1: Int(counts.1)
            case 2: Int(counts.2)
            case 3: Int(counts.3)
            default: Int(counts.4)
            }
        }

        /// The field's bytes' offset from `start` and length (-1: absent).
        func span(_ field: Int) -> (offset: Int, count: Int) {
            var offset = 0
            for earlier in 0..<field { offset += max(0, count(earlier)) }
            return (offset, count(field))
        }

        /// All the entry's bytes in the shared buffer.
        var byteCount: Int { span(4).offset + max(0, count(4)) }

        /// What keeping the entry costs: the record, its bytes, and 32 bytes for the
        /// unused capacity of the arrays that hold them (they grow by doubling, and
        /// dropped entries are compacted away in bulk).
        var memory: Int { Self.memory(byteCount: byteCount) }

        static func memory(byteCount: Int) -> Int { MemoryLayout<Record>.stride + byteCount + 32 }
    }

    let capacity: Int
    let byteLimit: Int
    /// Kept entries are `records[head...]`.
    private(set) var records: [Record] = []
    private(set) var head = 0
    /// The entries' bytes; `bytes[0]` is byte `bytesBase` of all bytes ever stored.
    private(set) var bytes: [UInt8] = []
    private(set) var bytesBase = 0
    /// The memory the kept entries take.
    private(set) var memory = 0

    init(capacity: Int, byteLimit: Int) {
        (self.capacity, self.byteLimit) = (capacity, byteLimit)
    }

    /// Whether entries are kept at all.
    var isKeeping: Bool { capacity > 0 && byteLimit > 0 }

    /// The kept entries as a collection.
    var entries: TraceLog.Entries { TraceLog.Entries(records: records[head...], bytes: bytes, bytesBase: bytesBase) }

    /// Keeps `entry` with its own ``TraceLog/Entry/frameText``, if any.
    mutating func keep(_ entry: TraceLog.Entry) {
        guard let text = entry.frameText else { return keep(fieldsOf: entry, framed: false) { _ in } }
        keep(fieldsOf: entry, framed: true) { $0 += text }
    }

    /// Keeps `entry` with the frame text that `writeFrame` appends to the shared buffer.
    mutating func keep(_ entry: TraceLog.Entry, frame writeFrame: (inout [UInt8]) -> Void) {
        keep(fieldsOf: entry, framed: true, writeFrame)
    }

    /// Keeps the entry of a frame `frame` (no route, text or code) from its fields, as
    /// ``keep(_:frame:)`` would keep it, without building it: the ping path's way.
    mutating func keepFrame(sequence: Int, time: Instant, kind: TraceLog.Kind, connection: ConnectionID, uid: String?,
                            deviceId: String?, frame: UnsafeRawBufferPointer) {
        keep(sequence: sequence, time: time, kind: kind, connection: connection, code: nil,
             strings: (uid, deviceId, nil, nil), framed: true) { $0.append(contentsOf: frame) }
    }

    private mutating func keep(fieldsOf entry: TraceLog.Entry, framed: Bool, _ writeFrame: (inout [UInt8]) -> Void) {
        keep(sequence: entry.sequence, time: entry.time, kind: entry.kind, connection: entry.connection, code: entry.code,
             strings: (entry.uid, entry.deviceId, entry.route, entry.text), framed: framed, writeFrame)
    }

    /// Keeps an entry: its strings (uid, deviceId, route, text) and, when `framed`, the
    /// frame text `writeFrame` appends go to the shared buffer.
    private mutating func keep(sequence: Int, time: Instant, kind: TraceLog.Kind, connection: ConnectionID?, code: UInt16?,
                               strings: (String?, String?, String?, String?), framed: Bool,
                               _ writeFrame: (inout [UInt8]) -> Void) {
        let start = bytes.count
        let counts = (store(strings.0), store(strings.1), store(strings.2), store(strings.3))
        let frameStart = bytes.count
        if framed { writeFrame(&bytes) }
        let record = Record(sequence: sequence, time: time, connection: connection, code: code, kind: kind,
                            start: bytesBase + start,
                            counts: (counts.0, counts.1, counts.2, counts.3, framed ? Int32(bytes.count - frameStart) : -1))
        records.append(record)
        memory += Record.memory(byteCount: bytes.count - start)  // the bytes from `start` on are the entry's
        while records.count - head > capacity || memory > byteLimit {
            memory -= records[head].memory
            head += 1
        }
        if head > 1024, head * 2 > records.count {
            let firstKept = head < records.count ? records[head].start : bytesBase + bytes.count
            bytes.removeFirst(firstKept - bytesBase)
            bytesBase = firstKept
            records.removeFirst(head)
            head = 0
        }
    }

    /// Appends `string`'s UTF-8 to the buffer; returns its length, -1 for nil.
    private mutating func store(_ string: String?) -> Int32 {
        guard var string else { return -1 }
        return string.withUTF8 { utf8 in
            bytes.append(contentsOf: utf8)
            return Int32(utf8.count)
        }
    }
}

extension TraceLog {
    /// Kept entries, oldest first: each one is built (its strings and frame's text copied
    /// out) when read.
    public struct Entries: RandomAccessCollection {
        let records: ArraySlice<TraceStore.Record>
        let bytes: [UInt8]
        let bytesBase: Int

        public var startIndex: Int { records.startIndex }
        public var endIndex: Int { records.endIndex }

        public subscript(position: Int) -> Entry {
            var entry = fields(at: position)
            entry.frameText = frame(at: position).map(Array.init)
            return entry
        }

        /// The entries from `start` on, at most `limit` of them.
        func prefix(from start: Int, limit: Int) -> Entries {
            Entries(records: records[start..<(start + Swift.max(0, Swift.min(limit, endIndex - start)))], bytes: bytes,
                    bytesBase: bytesBase)
        }

        /// The sequence number of the entry at `position`.
        func sequence(at position: Int) -> Int { records[position].sequence }

        /// The kind, connection and time of the entry at `position`, read in place.
        func record(at position: Int) -> (kind: Kind, connection: ConnectionID?, time: Instant) {
            let record = records[position]
            return (record.kind, record.connection, record.time)
        }

        /// The entry at `position` without its frame.
        private func fields(at position: Int) -> Entry {
            let record = records[position]
            func string(_ field: Int) -> String? { slice(record, field).map { String(decoding: $0, as: UTF8.self) } }
            return Entry(sequence: record.sequence, time: record.time, kind: record.kind, connection: record.connection,
                         uid: string(0), deviceId: string(1), route: string(2), text: string(3), code: record.code)
        }

        /// The frame's text of the entry at `position`, in place.
        func frame(at position: Int) -> ArraySlice<UInt8>? {
            slice(records[position], 4)
        }

        /// The bytes of one of the record's fields (``TraceStore/Record/counts``), in place.
        private func slice(_ record: TraceStore.Record, _ field: Int) -> ArraySlice<UInt8>? {
            let (offset, count) = record.span(field)
            guard count >= 0 else { return nil }
            let start = record.start - bytesBase + offset
            return bytes[start..<(start + count)]
        }

        /// Appends the entries' JSON lines to `bytes`, each frame's text copied once.
        func appendLines(to lines: inout [UInt8]) {
            for position in indices {
                fields(at: position).serialize(into: &lines, frame: frame(at: position))
                lines.append(10)
            }
        }
    }
}
