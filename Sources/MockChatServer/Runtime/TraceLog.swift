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
        /// The frame, when it was valid JSON.
        public var frame: JSONValue?
        /// The frame's text when it was not valid JSON (at most 1 KiB), or a note.
        public var text: String?
        public var code: UInt16?

        /// The entry as one JSON object.
        public var json: JSONValue {
            var object = JSONObject()
            forEachField { key, value in object[key] = value }
            return .object(object)
        }

        /// The length of the entry's JSON line without its newline: `json`'s serialized
        /// length, counted without building or writing it.
        var serializedCount: Int {
            // `{` and `}`, plus each field's `"key":` and value, separated by commas.
            var count = 1
            forEachField { key, value in count += JSONValue.stringCount(key) + 2 + value.serializedCount }
            return count
        }

        /// Calls `visit` with each field of the entry's JSON object, in order: the one
        /// list of fields that both ``json`` and ``serializedCount`` read.
        private func forEachField(_ visit: (String, JSONValue) -> Void) {
            visit("seq", .integer(Int64(sequence)))
            visit("t", .double(time.seconds))
            visit("kind", .string(kind.rawValue))
            if let connection { visit("conn", .string(connection.description)) }
            if let uid { visit("uid", .string(uid)) }
            if let deviceId { visit("device", .string(deviceId)) }
            if let code { visit("code", .integer(Int64(code))) }
            if let route { visit("route", .string(route)) }
            if let frame { visit("frame", frame) }
            if let text { visit("text", .string(text)) }
        }
    }

    /// Entries kept in memory, oldest first; the oldest are dropped beyond `capacity`
    /// entries or `byteLimit` bytes.
    public var entries: ArraySlice<Entry> { kept[head...] }

    /// How many entries are kept in memory; 0 keeps none (a file, if given, still gets every line).
    public let capacity: Int
    /// How many bytes of JSON lines are kept in memory at most.
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
    /// The bytes of JSON lines the kept entries take.
    public private(set) var keptBytes = 0
    /// Called after each entry is kept in memory (the console's live stream).
    public var onKeep: (() -> Void)?
    /// The header's fields besides format and version, redacted: what ``headerLine`` writes.
    public private(set) var headerFields = JSONObject()

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
        let line = headerLine()
        fwrite(line, 1, line.count, file)
        fflush(file)
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
                          text: text.map { String($0.prefix(1024)) }, code: code)
        guard let file else {
            // Kept in memory only: the line's length is all that counts, and the frame's
            // summary when the line would be long.
            var size = entry.serializedCount + 1
            if entry.frame != nil, size > Self.longFrameBytes + 513 {
                entry.frame = Self.summary(of: entry.frame!)
                size = entry.serializedCount + 1
            }
            keep(entry, size: size)
            return
        }
        var line: [UInt8] = []
        entry.json.serialize(into: &line)
        if kind == .control, let payload = entry.frame, line.count > Self.longFrameBytes + 512,
           let name = attach(payload, sequence: sequence) {
            entry.frame = ["file": .string(name)]
            line.removeAll(keepingCapacity: true)
            entry.json.serialize(into: &line)
        }
        line.append(10)
        let whole = wholeFrames ? line : []
        if entry.frame != nil, line.count > Self.longFrameBytes + 513 {
            entry.frame = Self.summary(of: entry.frame!)
            line.removeAll(keepingCapacity: true)
            entry.json.serialize(into: &line)
            line.append(10)
        }
        keep(entry, size: line.count)
        let written = whole.isEmpty ? line : whole
        fwrite(written, 1, written.count, file)
        fflush(file)
    }

    /// Keeps an entry whose JSON line takes `size` bytes, dropping the oldest beyond the limits.
    private func keep(_ entry: Entry, size: Int) {
        guard capacity > 0, byteLimit > 0 else { return }
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
    private func attach(_ payload: JSONValue, sequence: Int) -> String? {
        guard let path else { return nil }
        let target = "\(path).\(sequence).json"
        guard let handle = fopen(target, "w") else { return nil }
        var bytes: [UInt8] = []
        payload.serialize(into: &bytes)
        bytes.append(10)
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
            entry.json.serialize(into: &bytes)
            bytes.append(10)
        }
        return bytes
    }
}
