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
    public enum Kind: String, Sendable, CaseIterable {
        case open, `in`, out, close, fault, control
    }

    /// Entries kept in memory, oldest first; the oldest are dropped beyond `capacity`
    /// entries or `byteLimit` bytes.
    public var entries: Entries { store.entries }

    /// How many entries are kept in memory; 0 keeps none (a file, if given, still gets every line).
    public let capacity: Int
    /// How many bytes of memory the kept entries may take at most (``TraceStore/Record/memory``).
    public let byteLimit: Int
    /// Whether credential values (``secretKeys``) are replaced by ``redacted`` before an entry
    /// is kept or written.
    public let redactsSecrets: Bool
    /// Whether entries are kept or written at all; callers may skip building costly
    /// arguments when not.
    public var isRecording: Bool { capacity > 0 || file != nil }
    /// Whether entries are kept in memory only (no file): what the default server does.
    private var keepsOnly: Bool { file == nil }
    /// Whether the file gets frames longer than ``longFrameBytes`` whole (a recording to
    /// replay) rather than as their summary.
    public let wholeFrames: Bool
    /// The control request being handled (`POST /control/faults`); `control` entries
    /// recorded meanwhile carry it as their route.
    public var controlRoute: String?
    /// The bytes of memory the kept entries take.
    public var keptBytes: Int { store.memory }
    /// Called after each entry is kept in memory (the console's live stream).
    @exclusivity(unchecked) public var onKeep: (() -> Void)?
    /// The header's fields besides format and version, redacted: what ``headerLine`` writes.
    public private(set) var headerFields = JSONObject()
    /// Why writing the trace file failed, once it has: later lines are not written.
    public private(set) var writeFailure: String?

    /// Frames whose JSON is longer than this are kept as their length, first bytes and hash.
    public static let longFrameBytes = 4096
    /// What a redacted secret reads as.
    public static let redacted = "<redacted>"

    @exclusivity(unchecked) private var store: TraceStore
    @exclusivity(unchecked) private var nextSequence = 1
    @exclusivity(unchecked) private var file: UnsafeMutablePointer<FILE>?
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
        store = TraceStore(capacity: self.capacity, byteLimit: self.byteLimit)
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
                          deviceId: deviceId, route: kind == .control ? controlRoute : nil,
                          text: text.map { redactsSecrets ? Self.redactingText(String($0.prefix(1024))) : String($0.prefix(1024)) },
                          code: code)
        let frame = frame.map(redact)
        guard keepsOnly else {
            entry.frame = frame
            return writeAndKeep(entry)
        }
        guard store.isKeeping else { return }
        if let frame {
            store.keep(entry) { bytes in Self.appendFrame(of: entry, to: &bytes) { frame.serialize(into: &$0) } }
        } else {
            store.keep(entry)
        }
        onKeep?()
    }

    /// Appends an entry whose frame is `frameText` as it is, unparsed: the caller vouches
    /// that it is compact JSON (as ``JSONValue/serialize(into:)`` writes it) without a
    /// credential to redact (a ping, a pong, or ``keptText(of:serialized:)``). The entry
    /// is the one ``record(_:time:connection:uid:deviceId:frame:text:code:)`` makes of
    /// the parsed frame.
    public func record(_ kind: Kind, time: Instant, connection: ConnectionID, uid: String?, deviceId: String?,
                       frameText: UnsafeRawBufferPointer) {
        let sequence = nextSequence
        nextSequence += 1
        guard isRecording else { return }
        guard keepsOnly else {
            var entry = Entry(sequence: sequence, time: time, kind: kind, connection: connection, uid: uid, deviceId: deviceId)
            entry.frameText = Array(frameText)
            return writeAndKeep(entry)
        }
        guard store.isKeeping else { return }
        let stringBytes = (uid?.utf8.count ?? 0) + (deviceId?.utf8.count ?? 0)
        if Entry.serializedCountBound(stringBytes: stringBytes, frameCount: frameText.count) + 1 > Self.longFrameBytes + 513 {
            // Maybe long: the entry is built to count its line.
            let entry = Entry(sequence: sequence, time: time, kind: kind, connection: connection, uid: uid, deviceId: deviceId)
            store.keep(entry) { bytes in Self.appendFrame(of: entry, to: &bytes) { $0.append(contentsOf: frameText) } }
        } else {
            store.keepFrame(sequence: sequence, time: time, kind: kind, connection: connection, uid: uid, deviceId: deviceId,
                            frame: frameText)
        }
        onKeep?()
    }

    /// The text to trace for `frame`, whose compact JSON is `text`: `text` itself, or the
    /// redacted frame's when it holds a credential. Made once, it serves every recipient
    /// of a frame sent to many.
    public func keptText(of frame: JSONValue, serialized text: [UInt8]) -> [UInt8] {
        guard redactsSecrets, let redacted = Self.redacting(frame) else { return text }
        var bytes: [UInt8] = []
        redacted.serialize(into: &bytes)
        return bytes
    }

    /// Appends a frame's text to `bytes` with `write`, or its summary when `entry`'s line
    /// with it would be long.
    private static func appendFrame(of entry: Entry, to bytes: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        let start = bytes.count
        write(&bytes)
        guard isLong(entry, frameCount: bytes.count - start) else { return }
        let summary = summary(of: bytes[start...])
        bytes.removeSubrange(start...)
        summary.serialize(into: &bytes)
    }

    /// Whether `entry`'s line with a frame of `frameCount` bytes is long, so that its
    /// frame is kept as a summary. Most lines are far below the limit, which is found
    /// without formatting a field.
    private static func isLong(_ entry: Entry, frameCount: Int) -> Bool {
        entry.serializedCountBound(frameCount: frameCount) + 1 > longFrameBytes + 513
            && entry.serializedCount(frameCount: frameCount) + 1 > longFrameBytes + 513
    }

    /// Writes the entry's line to the trace file (a long control payload to a file of its
    /// own, a long frame as its summary unless ``wholeFrames``) and keeps it.
    private func writeAndKeep(_ entry: Entry) {
        guard let file else { return }
        var entry = entry
        var line: [UInt8] = []
        entry.serialize(into: &line)
        if entry.kind == .control, let payload = entry.frameText, line.count > Self.longFrameBytes + 512,
           let name = attach(payload, sequence: entry.sequence) {
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
        if store.isKeeping {
            store.keep(entry)
            onKeep?()
        }
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

    /// Forgets every kept entry and gives their memory back; sequence numbers go on.
    public func clear() {
        store = TraceStore(capacity: capacity, byteLimit: byteLimit)
    }

    /// Entries with a sequence number above `sequence`, at most `limit` of them.
    public func entries(after sequence: Int, limit: Int = .max) -> Entries {
        let all = store.entries
        guard let oldest = all.first.map({ _ in all.sequence(at: all.startIndex) }) else { return all }
        // Kept sequence numbers are consecutive.
        let skipped = sequence < oldest ? 0 : min(all.count, sequence - oldest + 1)
        return all.prefix(from: all.startIndex + skipped, limit: limit)
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
    static func summary(of bytes: some Collection<UInt8>) -> JSONValue {
        let hex = String(FNV1a64.hash(bytes), radix: 16)
        return .object(JSONObject([
            ("summarized", .bool(true)), ("bytes", .integer(Int64(bytes.count))),
            ("prefix", .string(String(decoding: bytes.prefix(256), as: UTF8.self))),
            ("fnv1a64", .string(String(repeating: "0", count: 16 - hex.count) + hex)),
        ]))
    }

    /// Kept entries as JSON lines.
    public static func jsonLines(_ entries: Entries) -> [UInt8] {
        var bytes: [UInt8] = []
        entries.appendLines(to: &bytes)
        return bytes
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
