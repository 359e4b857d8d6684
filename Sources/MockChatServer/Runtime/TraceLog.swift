import ChatProtocol
import MockChatCore
import Foundation

/// A record of every frame in and out and every open and close, as JSON lines.
///
/// Each entry carries a sequence number, the clock time, the connection and, once
/// known, the user and device. With the virtual clock the same scenario and seed give
/// byte-identical traces.
///
/// A trace file starts with a header line naming the format and its version, the clock
/// and the fixtures loaded at start (docs/PROTOCOL.md, "Trace format"). Control entries
/// carry the request's route (`POST /control/faults`) and its parameters in `frame`, so
/// that a replay issues the same request; a payload too long to keep inline goes to a
/// file beside the trace, which the entry names as `{"file": NAME}`. A recording
/// (`wholeFrames`) also writes long frames whole, where a trace keeps their summary.
public final class TraceLog {
    /// The version of the trace format; it changes when an entry's meaning does.
    public static let formatVersion = 1

    /// What happened.
    public enum Kind: String, Sendable {
        case open, `in`, out, close, fault, control
    }

    /// One line of the trace.
    public struct Entry: Sendable, Equatable {
        public var sequence: Int
        public var time: Instant
        public var kind: Kind
        public var connection: ConnectionID?
        public var uid: String?
        public var deviceId: String?
        /// The control request that made a `control` entry: `POST /control/faults`.
        public var route: String?
        /// The frame, when it was valid JSON. Kept as its compact JSON text
        /// (``frameText``), whose size is known, and parsed when read: a parsed frame's
        /// tree of values can take many times the bytes of its text.
        public var frame: JSONValue? {
            get { frameText.flatMap { try? JSONParser.parse($0) } }
            set { frameText = newValue.map { value in var bytes: [UInt8] = []; value.serialize(into: &bytes); return bytes } }
        }
        /// The frame's compact JSON text.
        public private(set) var frameText: [UInt8]?
        /// The frame's text when it was not valid JSON (at most 1 KiB), or a note.
        public var text: String?
        public var code: UInt16?

        public init(sequence: Int, time: Instant, kind: Kind, connection: ConnectionID? = nil, uid: String? = nil,
                    deviceId: String? = nil, route: String? = nil, frame: JSONValue? = nil, text: String? = nil,
                    code: UInt16? = nil) {
            (self.sequence, self.time, self.kind, self.connection) = (sequence, time, kind, connection)
            (self.uid, self.deviceId, self.route, self.text, self.code) = (uid, deviceId, route, text, code)
            self.frame = frame
        }

        /// The entry as one JSON object.
        public var json: JSONValue {
            var object = JSONObject()
            forEachField { key, value, raw in object[key] = value ?? raw.flatMap { try? JSONParser.parse($0) } ?? .null }
            return .object(object)
        }

        /// Appends the entry's JSON line, without its newline, to `bytes`; the frame's
        /// text is copied as it is.
        func serialize(into bytes: inout [UInt8]) {
            bytes.append(UInt8(ascii: "{"))
            var first = true
            forEachField { key, value, raw in
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.string(key).serialize(into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                if let value { value.serialize(into: &bytes) } else if let raw { bytes += raw }
            }
            bytes.append(UInt8(ascii: "}"))
        }

        /// The length of the entry's JSON line without its newline: `json`'s serialized
        /// length, counted without building or writing it.
        var serializedCount: Int {
            // `{` and `}`, plus each field's `"key":` and value, separated by commas.
            var count = 1
            forEachField { key, value, raw in count += JSONValue.stringCount(key) + 2 + (value?.serializedCount ?? raw?.count ?? 0) }
            return count
        }

        /// What keeping the entry costs in memory: the entry itself, and each heap
        /// allocation it holds (a string of more than 15 bytes, the frame's text) with
        /// the allocator's header and rounding.
        var memoryCount: Int {
            func heap(_ bytes: Int) -> Int { (bytes + 16 + 15) / 16 * 16 + 16 }
            var count = MemoryLayout<Entry>.stride + MemoryLayout<Int>.stride
            for text in [uid, deviceId, route, text] { if let text, text.utf8.count > 15 { count += heap(text.utf8.count) } }
            if let frameText { count += heap(frameText.count + 32) }
            return count
        }

        /// Calls `visit` with each field of the entry's JSON object, in order, as a value
        /// or (the frame) as JSON text: the one list of fields every reader uses.
        private func forEachField(_ visit: (String, JSONValue?, [UInt8]?) -> Void) {
            visit("seq", .integer(Int64(sequence)), nil)
            visit("t", .double(time.seconds), nil)
            visit("kind", .string(kind.rawValue), nil)
            if let connection { visit("conn", .string(connection.description), nil) }
            if let uid { visit("uid", .string(uid), nil) }
            if let deviceId { visit("device", .string(deviceId), nil) }
            if let code { visit("code", .integer(Int64(code)), nil) }
            if let route { visit("route", .string(route), nil) }
            if let frameText { visit("frame", nil, frameText) }
            if let text { visit("text", .string(text), nil) }
        }
    }

    /// Entries kept in memory, oldest first; the oldest are dropped beyond `capacity`
    /// entries or `byteLimit` bytes.
    public var entries: ArraySlice<Entry> { kept[head...] }

    /// How many entries are kept in memory; 0 keeps none (a file, if given, still gets every line).
    public let capacity: Int
    /// How many bytes of memory the kept entries may take at most (``Entry/memoryCount``).
    public let byteLimit: Int
    /// Whether credential values (``secretKeys``) are replaced by ``redacted`` before an entry
    /// is kept or written.
    public let redactsSecrets: Bool
    /// Whether entries are kept or written at all; callers may skip building costly
    /// arguments when not.
    public var isRecording: Bool { capacity > 0 || file != nil }
    /// Whether the file gets frames longer than ``longFrameBytes`` whole (a recording to
    /// replay) rather than as their summary.
    public let wholeFrames: Bool
    /// The control request being handled (`POST /control/faults`); `control` entries
    /// recorded meanwhile carry it as their route.
    public var controlRoute: String?
    /// The bytes of memory the kept entries take.
    public private(set) var keptBytes = 0
    /// Called after each entry is kept in memory (the console's live stream).
    public var onKeep: (() -> Void)?
    /// The header's fields besides format and version, redacted: what ``headerLine`` writes.
    public private(set) var headerFields = JSONObject()
    /// Why writing the trace file failed, once it has: later lines are not written.
    public private(set) var writeFailure: String?

    /// Frames whose JSON is longer than this are kept as their length, first bytes and hash.
    public static let longFrameBytes = 4096
    /// What a redacted secret reads as.
    public static let redacted = "<redacted>"

    /// Kept entries are `kept[head...]`; dropped ones are compacted away in bulk.
    private var kept: [Entry] = []
    private var sizes: [Int] = []
    private var head = 0
    private var nextSequence = 1
    private var file: UnsafeMutablePointer<FILE>?
    private var path: String?

    /// Keeps up to `capacity` entries and `byteLimit` bytes in memory and, with `path`,
    /// appends every line to a file. Fails with the operating system's reason when the
    /// file cannot be created.
    public init(capacity: Int = 200_000, byteLimit: Int = 64 << 20, path: String? = nil,
                redactsSecrets: Bool = true, wholeFrames: Bool = false) throws(FixtureError) {
        self.capacity = max(0, capacity)
        self.wholeFrames = wholeFrames
        self.byteLimit = max(0, byteLimit)
        self.redactsSecrets = redactsSecrets
        if let path {
            guard let handle = fopen(path, "w") else {
                throw FixtureError("cannot write the trace file '\(path)': \(String(cString: strerror(errno)))")
            }
            file = handle
            self.path = path
        }
    }

    /// The first line of a trace file: `{"format":"mockchat-trace","version":1,...fields}`.
    /// Written only to the file; secrets in `fields` are redacted like control payloads.
    public func writeHeader(_ fields: JSONValue) {
        headerFields = JSONObject()
        for (key, value) in fields.objectValue ?? JSONObject() { headerFields[key] = redact(value) }
        guard let file else { return }
        write(headerLine(), to: file)
    }

    /// The header line with ``headerFields``, `overriding` some of them (a trace made
    /// from part of the kept entries starts later than the server did).
    public func headerLine(overriding: JSONObject = JSONObject()) -> [UInt8] {
        var object = JSONObject([("format", .string("mockchat-trace")), ("version", .integer(Int64(Self.formatVersion)))])
        for (key, value) in headerFields { object[key] = value }
        for (key, value) in overriding { object[key] = value }
        var line: [UInt8] = []
        JSONValue.object(object).serialize(into: &line)
        line.append(10)
        return line
    }

    deinit {
        if let file { fclose(file) }
    }

    /// The sequence number of the newest entry (0 before the first).
    public var lastSequence: Int { nextSequence - 1 }

    /// Appends an entry. Sequence numbers advance even when nothing is kept.
    public func record(_ kind: Kind, time: Instant, connection: ConnectionID? = nil, uid: String? = nil,
                       deviceId: String? = nil, frame: JSONValue? = nil, text: String? = nil, code: UInt16? = nil) {
        let sequence = nextSequence
        nextSequence += 1
        guard isRecording else { return }
        var entry = Entry(sequence: sequence, time: time, kind: kind, connection: connection, uid: uid,
                          deviceId: deviceId, route: kind == .control ? controlRoute : nil, frame: frame.map(redact),
                          text: text.map { redactsSecrets ? Self.redactingText(String($0.prefix(1024))) : String($0.prefix(1024)) },
                          code: code)
        guard let file else {
            // Kept in memory only: the frame's summary when the line would be long.
            if let bytes = entry.frameText, entry.serializedCount + 1 > Self.longFrameBytes + 513 {
                entry.frame = Self.summary(of: bytes)
            }
            keep(entry)
            return
        }
        var line: [UInt8] = []
        entry.serialize(into: &line)
        if kind == .control, let payload = entry.frameText, line.count > Self.longFrameBytes + 512,
           let name = attach(payload, sequence: sequence) {
            entry.frame = ["file": .string(name)]
            line.removeAll(keepingCapacity: true)
            entry.serialize(into: &line)
        }
        line.append(10)
        let whole = wholeFrames ? line : []
        if let bytes = entry.frameText, line.count > Self.longFrameBytes + 513 {
            entry.frame = Self.summary(of: bytes)
            line.removeAll(keepingCapacity: true)
            entry.serialize(into: &line)
            line.append(10)
        }
        keep(entry)
        write(whole.isEmpty ? line : whole, to: file)
    }

    /// Writes a line to the trace file; the first failure (a full disk, `/dev/full`) is
    /// reported on stderr and in ``writeFailure``, and nothing more is written.
    private func write(_ line: [UInt8], to file: UnsafeMutablePointer<FILE>) {
        guard writeFailure == nil else { return }
        if fwrite(line, 1, line.count, file) == line.count, fflush(file) == 0 { return }
        let reason = String(cString: strerror(errno))
        writeFailure = reason
        FileHandle.standardError.write(Data("mockchat: writing the trace file '\(path ?? "")' failed: \(reason); no further entries are written to it\n".utf8))
    }

    /// Keeps an entry, dropping the oldest beyond the limits.
    private func keep(_ entry: Entry) {
        guard capacity > 0, byteLimit > 0 else { return }
        let size = entry.memoryCount
        kept.append(entry)
        sizes.append(size)
        keptBytes += size
        while kept.count - head > capacity || keptBytes > byteLimit {
            keptBytes -= sizes[head]
            head += 1
        }
        if head > 1024, head * 2 > kept.count {
            kept.removeFirst(head)
            sizes.removeFirst(head)
            head = 0
        }
        onKeep?()
    }

    /// Forgets every kept entry and gives their memory back; sequence numbers go on.
    public func clear() {
        kept = []
        sizes = []
        head = 0
        keptBytes = 0
    }

    /// Entries with a sequence number above `sequence`, at most `limit` of them.
    public func entries(after sequence: Int, limit: Int = .max) -> ArraySlice<Entry> {
        guard let oldest = kept[head...].first?.sequence else { return [] }
        // Kept sequence numbers are consecutive.
        let count = kept.count - head
        let skipped = sequence < oldest ? 0 : min(count, sequence - oldest + 1)
        let start = head + skipped
        return kept[start..<(start + min(count - skipped, max(0, limit)))]
    }

    /// Writes a long control payload to `TRACE.SEQ.json` beside the trace file and
    /// returns that file's name, or nil without a trace file.
    private func attach(_ payload: [UInt8], sequence: Int) -> String? {
        guard let path else { return nil }
        let target = "\(path).\(sequence).json"
        guard let handle = fopen(target, "w") else { return nil }
        let bytes = payload + [10]
        fwrite(bytes, 1, bytes.count, handle)
        fclose(handle)
        return String(target.split(separator: "/").last ?? Substring(target))
    }

    /// Keys whose string values are credentials.
    static let secretKeys: Set<String> = ["authKey", "authToken", "token"]

    /// `value` with every credential string replaced by ``redacted``, at any depth, when
    /// ``redactsSecrets``. Values without secrets are returned as they are, uncopied.
    private func redact(_ value: JSONValue) -> JSONValue {
        guard redactsSecrets else { return value }
        return Self.redacting(value) ?? value
    }

    /// The redacted copy of `value`, or nil when it holds no credential.
    private static func redacting(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .object(var object):
            var changed = false
            for (key, item) in object {
                if secretKeys.contains(key), item.stringValue != nil {
                    object[key] = .string(redacted)
                    changed = true
                } else if let inner = redacting(item) {
                    object[key] = inner
                    changed = true
                }
            }
            return changed ? .object(object) : nil
        case .array(let items):
            var changed = false
            let mapped = items.map { item -> JSONValue in
                guard let inner = redacting(item) else { return item }
                changed = true
                return inner
            }
            return changed ? .array(mapped) : nil
        default:
            return nil
        }
    }

    /// A long frame as its length, its first bytes and a 64-bit FNV-1a hash of its JSON.
    static func summary(of frame: JSONValue) -> JSONValue {
        var bytes: [UInt8] = []
        frame.serialize(into: &bytes)
        return summary(of: bytes)
    }

    /// The summary of a frame given as its JSON text.
    static func summary(of bytes: [UInt8]) -> JSONValue {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return .object(JSONObject([
            ("summarized", .bool(true)), ("bytes", .integer(Int64(bytes.count))),
            ("prefix", .string(String(decoding: bytes.prefix(256), as: UTF8.self))),
            ("fnv1a64", .string(String(repeating: "0", count: 16 - hex.count) + hex)),
        ]))
    }

    /// Entries as JSON lines.
    public static func jsonLines(_ entries: some Sequence<Entry>) -> [UInt8] {
        var bytes: [UInt8] = []
        for entry in entries {
            entry.serialize(into: &bytes)
            bytes.append(10)
        }
        return bytes
    }

    /// A frame's text that is not valid JSON, with the string after each credential key
    /// (`"authKey": "..."`, up to its closing quote or the end) replaced by ``redacted``:
    /// a login frame with a syntax error still carries its key.
    static func redactingText(_ text: String) -> String {
        guard secretKeys.contains(where: { text.contains($0) }) else { return text }
        var bytes = Array(text.utf8)
        for key in secretKeys {
            let pattern = Array("\"\(key)\"".utf8)
            var index = 0
            while index + pattern.count <= bytes.count {
                guard bytes[index..<(index + pattern.count)].elementsEqual(pattern) else { index += 1; continue }
                var cursor = index + pattern.count
                while cursor < bytes.count, bytes[cursor] == 0x20 || bytes[cursor] == 0x3A || bytes[cursor] == 0x09 { cursor += 1 }
                guard cursor < bytes.count, bytes[cursor] == 0x22 else { index = cursor; continue }
                var end = cursor + 1
                while end < bytes.count, bytes[end] != 0x22 { end += bytes[end] == 0x5C ? 2 : 1 }
                let replacement = Array("\"\(redacted)\"".utf8)
                bytes.replaceSubrange(cursor..<min(end + 1, bytes.count), with: replacement)
                index = cursor + replacement.count
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
