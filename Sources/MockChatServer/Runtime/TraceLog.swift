import ChatProtocol
import EventLoop
import Foundation

/// A record of every frame in and out and every open and close, as JSON lines.
///
/// Each entry carries a sequence number, the clock time, the connection and, once
/// known, the user and device. With the virtual clock the same scenario and seed give
/// byte-identical traces.
public final class TraceLog {
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
        /// The frame, when it was valid JSON.
        public var frame: JSONValue?
        /// The frame's text when it was not valid JSON (at most 1 KiB), or a note.
        public var text: String?
        public var code: UInt16?

        /// The entry as one JSON object.
        public var json: JSONValue {
            var object = JSONObject([("seq", .integer(Int64(sequence))), ("t", .double(time.seconds)),
                                     ("kind", .string(kind.rawValue))])
            if let connection { object["conn"] = .string(connection.description) }
            if let uid { object["uid"] = .string(uid) }
            if let deviceId { object["device"] = .string(deviceId) }
            if let code { object["code"] = .integer(Int64(code)) }
            if let frame { object["frame"] = frame }
            if let text { object["text"] = .string(text) }
            return .object(object)
        }
    }

    /// Entries kept in memory, oldest first; the oldest are dropped beyond `capacity`.
    public var entries: [Entry] {
        guard ring.count == capacity, head > 0 else { return ring }
        return Array(ring[head...] + ring[..<head])
    }

    /// How many entries are kept in memory; 0 keeps none (a file, if given, still gets every line).
    public let capacity: Int
    /// Whether entries are kept or written at all; callers may skip building costly
    /// arguments when not.
    public var isRecording: Bool { capacity > 0 || file != nil }
    /// Kept entries in a ring: once full, `head` is the oldest.
    private var ring: [Entry] = []
    private var head = 0
    private var nextSequence = 1
    private var file: UnsafeMutablePointer<FILE>?

    /// Keeps up to `capacity` entries in memory and, with `path`, appends every line to a file.
    public init(capacity: Int = 200_000, path: String? = nil) throws(FixtureError) {
        self.capacity = max(0, capacity)
        if let path {
            guard let handle = fopen(path, "w") else { throw FixtureError("cannot open trace file \(path)") }
            file = handle
        }
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
        let entry = Entry(sequence: sequence, time: time, kind: kind, connection: connection, uid: uid,
                          deviceId: deviceId, frame: frame, text: text.map { String($0.prefix(1024)) }, code: code)
        if ring.count < capacity {
            ring.append(entry)
        } else if capacity > 0 {
            ring[head] = entry
            head = (head + 1) % capacity
        }
        if let file {
            var line: [UInt8] = []
            entry.json.serialize(into: &line)
            line.append(10)
            fwrite(line, 1, line.count, file)
            fflush(file)
        }
    }

    /// Entries with a sequence number above `sequence`.
    public func entries(after sequence: Int) -> ArraySlice<Entry> {
        guard let newest = ring.isEmpty ? nil : ring[(head + ring.count - 1) % ring.count].sequence,
              sequence < newest else { return [] }
        // Kept sequence numbers are consecutive, so the newest `wanted` entries are the answer.
        let wanted = min(ring.count, newest - max(sequence, 0))
        var result: [Entry] = []
        result.reserveCapacity(wanted)
        for offset in (ring.count - wanted)..<ring.count { result.append(ring[(head + offset) % ring.count]) }
        return result[...]
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
