import ChatProtocol
import MockChatCore

extension TraceLog {
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
        public internal(set) var frameText: [UInt8]?
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
            forEachField(frame: frameText?[...]) { key, value, raw in
                object[key] = value ?? raw.flatMap { text in text.withUnsafeBytes { try? JSONParser.parse($0) } } ?? .null
            }
            return .object(object)
        }

        /// Appends the entry's JSON line, without its newline, to `bytes`; the frame's
        /// text is copied as it is.
        func serialize(into bytes: inout [UInt8]) {
            serialize(into: &bytes, frame: frameText?[...])
        }

        /// Appends the entry's JSON line with `frame` as the frame's text (the entry's
        /// own ``frameText`` is not read): how the trace writes a kept entry whose
        /// frame it stores apart.
        func serialize(into bytes: inout [UInt8], frame: ArraySlice<UInt8>?) {
            bytes.append(UInt8(ascii: "{"))
            var first = true
            forEachField(frame: frame) { key, value, raw in
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
        var serializedCount: Int { serializedCount(frameCount: frameText?.count) }

        /// The line's length with a frame text of `frameCount` bytes (nil: no frame).
        func serializedCount(frameCount: Int?) -> Int {
            // `{` and `}`, plus each field's `"key":` and value, separated by commas.
            var count = 1
            forEachField(frame: nil) { key, value, _ in count += JSONValue.stringCount(key) + 2 + (value?.serializedCount ?? 0) }
            if let frameCount { count += JSONValue.stringCount("frame") + 2 + frameCount }
            return count
        }

        /// At least ``serializedCount(frameCount:)``, found without formatting a field:
        /// the numbers and keys take at most 256 bytes, and a string's JSON at most six
        /// bytes per UTF-8 byte (`\u001f`) plus its quotes.
        func serializedCountBound(frameCount: Int?) -> Int {
            Self.serializedCountBound(stringBytes: (uid?.utf8.count ?? 0) + (deviceId?.utf8.count ?? 0)
                                        + (route?.utf8.count ?? 0) + (text?.utf8.count ?? 0), frameCount: frameCount)
        }

        /// The same for an entry whose strings take `stringBytes` bytes of UTF-8.
        static func serializedCountBound(stringBytes: Int, frameCount: Int?) -> Int {
            256 + 6 * stringBytes + (frameCount ?? 0)
        }

        /// Calls `visit` with each field of the entry's JSON object, in order, as a value
        /// or (the frame, given as `frame`) as JSON text: the one list of fields every
        /// reader uses.
        private func forEachField(frame: ArraySlice<UInt8>?, _ visit: (String, JSONValue?, ArraySlice<UInt8>?) -> Void) {
            visit("seq", .integer(Int64(sequence)), nil)
            visit("t", .double(time.seconds), nil)
            visit("kind", .string(kind.rawValue), nil)
            if let connection { visit("conn", .string(connection.description), nil) }
            if let uid { visit("uid", .string(uid), nil) }
            if let deviceId { visit("device", .string(deviceId), nil) }
            if let code { visit("code", .integer(Int64(code)), nil) }
            if let route { visit("route", .string(route), nil) }
            if let frame { visit("frame", nil, frame) }
            if let text { visit("text", .string(text), nil) }
        }
    }
}

extension TraceLog.Entry: CustomStringConvertible {
    /// The entry's JSON line, without its newline.
    public var description: String {
        var bytes: [UInt8] = []
        serialize(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads an entry back from the JSON object that ``json`` makes (a line of a trace
    /// file, or of the control API's trace pages): the fields of ``forEachField(frame:_:)``,
    /// by the same names. Fails naming the field that is missing or of the wrong type.
    public init(json value: JSONValue) throws(FixtureError) {
        guard let object = value.objectValue else { throw FixtureError("a trace entry must be a JSON object") }
        func string(_ key: String) throws(FixtureError) -> String? {
            guard let field = object[key] else { return nil }
            guard let text = field.stringValue else { throw FixtureError("a trace entry's '\(key)' must be a string") }
            return text
        }
        guard let sequence = object["seq"]?.intValue else { throw FixtureError("a trace entry needs 'seq', an integer") }
        guard let seconds = object["t"]?.doubleValue else { throw FixtureError("a trace entry needs 't', a number") }
        let time: Instant
        do throws(BoundedNumberError) {
            time = try BoundedNumber.instant(seconds: seconds, "a trace entry's 't'")
        } catch {
            throw FixtureError(error.description)
        }
        guard let kind = try string("kind").flatMap(TraceLog.Kind.init(rawValue:)) else {
            throw FixtureError("a trace entry needs 'kind', one of \(TraceLog.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var connection: ConnectionID?
        if let text = try string("conn") {
            guard let id = ConnectionID(text) else { throw FixtureError("a trace entry's 'conn' must read c1, c2, ..., not '\(text)'") }
            connection = id
        }
        var code: UInt16?
        if let field = object["code"] {
            guard let number = field.intValue, let value = UInt16(exactly: number) else {
                throw FixtureError("a trace entry's 'code' must be an integer from 0 to 65535")
            }
            code = value
        }
        self.init(sequence: Int(sequence), time: time, kind: kind, connection: connection,
                  uid: try string("uid"), deviceId: try string("device"), route: try string("route"), frame: object["frame"],
                  text: try string("text"), code: code)
    }
}
