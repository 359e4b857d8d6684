/// A strict RFC 8259 JSON parser working directly on UTF-8 bytes.
///
/// Runs in time linear in the input and without recursion: nesting is tracked
/// on an explicit stack, so hostile inputs cannot exhaust the call stack.
/// Any value may appear at the top level. Duplicate object keys are accepted;
/// the last value wins and keeps the position of the first occurrence.
public enum JSONParser {
    /// The default limit on nested arrays and objects.
    ///
    /// The parser never recurses, but the resulting values are compared,
    /// serialized and released recursively, so keep any custom limit modest.
    public static let defaultMaxDepth = 32

    /// Parses one JSON value from raw UTF-8 bytes; at most `maxDepth` arrays/objects may be nested.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            throw JSONError(kind: .unexpectedEnd, offset: 0)
        }
        var reader = Reader(base: base.assumingMemoryBound(to: UInt8.self), end: bytes.count, maxDepth: maxDepth)
        return try reader.parseDocument()
    }

    /// Parses one JSON value from UTF-8 bytes; at most `maxDepth` arrays/objects may be nested.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one JSON value from text; at most `maxDepth` arrays/objects may be nested.
    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSONValue {
        let contiguous = text.utf8.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) -> JSONValue in
                try parse(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
            }
        }
        if let contiguous { return try contiguous.get() }
        return try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

/// Parsing state over one input buffer.
private struct Reader {
    /// An open array or object, remembering where its children start on the stacks.
    struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
    }

    let p: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var i = 0
    /// Completed children of all open containers, innermost last.
    var values: [JSONValue] = []
    /// Keys of all open objects, parallel to their entries in `values`.
    var keys: [String] = []
    var frames: [Frame] = []
    /// Reused buffer for strings that contain escapes.
    var scratch: [UInt8] = []

    init(base: UnsafePointer<UInt8>, end: Int, maxDepth: Int) {
        self.p = base
        self.end = end
        self.maxDepth = maxDepth
    }

    func fail(_ kind: JSONError.Kind, _ offset: Int) -> JSONError {
        JSONError(kind: kind, offset: offset)
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        nextValue: while true {
            skipWhitespace()
            guard i < end else { throw fail(.unexpectedEnd, end) }
            var value: JSONValue
            let c = p[i]
            switch c {
            case UInt8(ascii: "\""):
                value = .string(try readString())
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = c == UInt8(ascii: "{")
                guard frames.count < maxDepth else { throw fail(.tooDeep(limit: maxDepth), i) }
                i += 1
                skipWhitespace()
                if i < end && p[i] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    i += 1
                    value = isObject ? .object(JSONObject()) : .array([])
                } else {
                    frames.append(Frame(isObject: isObject, valueStart: values.count, keyStart: keys.count))
                    if isObject { try readKey() }
                    continue nextValue
                }
            case UInt8(ascii: "t"):
                try readLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try readLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try readLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try readNumber()
            default:
                throw fail(.unexpectedByte(c), i)
            }

            // Attach the finished value to its container, closing containers as they end.
            while let frame = frames.last {
                values.append(value)
                skipWhitespace()
                guard i < end else { throw fail(.unexpectedEnd, end) }
                let c = p[i]
                if c == UInt8(ascii: ",") {
                    i += 1
                    if frame.isObject {
                        skipWhitespace()
                        try readKey()
                    }
                    continue nextValue
                }
                guard c == (frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw fail(.unexpectedByte(c), i)
                }
                i += 1
                frames.removeLast()
                if frame.isObject {
                    value = .object(JSONObject(keys: keys[frame.keyStart...], values: values[frame.valueStart...]))
                    keys.removeSubrange(frame.keyStart...)
                } else {
                    value = .array(Array(values[frame.valueStart...]))
                }
                values.removeSubrange(frame.valueStart...)
            }

            skipWhitespace()
            guard i == end else { throw fail(.trailingData, i) }
            return value
        }
    }

    mutating func skipWhitespace() {
        while i < end {
            switch p[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    /// Reads `"key"` and the following `:`.
    mutating func readKey() throws(JSONError) {
        guard i < end else { throw fail(.unexpectedEnd, end) }
        guard p[i] == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(p[i]), i) }
        keys.append(try readString())
        skipWhitespace()
        guard i < end else { throw fail(.unexpectedEnd, end) }
        guard p[i] == UInt8(ascii: ":") else { throw fail(.unexpectedByte(p[i]), i) }
        i += 1
    }

    mutating func readLiteral(_ literal: StaticString) throws(JSONError) {
        let text = literal.utf8Start
        for k in 0..<literal.utf8CodeUnitCount {
            guard i + k < end else { throw fail(.unexpectedEnd, end) }
            guard p[i + k] == text[k] else { throw fail(.unexpectedByte(p[i + k]), i + k) }
        }
        i += literal.utf8CodeUnitCount
    }

    @inline(__always)
    func isDigit(_ j: Int) -> Bool {
        j < end && p[j] &- UInt8(ascii: "0") < 10
    }

    mutating func readNumber() throws(JSONError) -> JSONValue {
        let start = i
        var j = i
        let negative = p[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        guard isDigit(j) else { throw fail(.invalidNumber, j) }

        var magnitude: UInt64 = 0
        var overflow = false
        if p[j] == UInt8(ascii: "0") {
            j += 1
            if isDigit(j) { throw fail(.invalidNumber, j) }
        } else {
            while isDigit(j) {
                if !overflow {
                    let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times10.addingReportingOverflow(UInt64(p[j] &- UInt8(ascii: "0")))
                    if o1 || o2 { overflow = true } else { magnitude = sum }
                }
                j += 1
            }
        }

        var isInteger = true
        if j < end && p[j] == UInt8(ascii: ".") {
            isInteger = false
            j += 1
            guard isDigit(j) else { throw fail(.invalidNumber, j) }
            while isDigit(j) { j += 1 }
        }
        if j < end && (p[j] | 0x20) == UInt8(ascii: "e") {
            isInteger = false
            j += 1
            if j < end && (p[j] == UInt8(ascii: "+") || p[j] == UInt8(ascii: "-")) { j += 1 }
            guard isDigit(j) else { throw fail(.invalidNumber, j) }
            while isDigit(j) { j += 1 }
        }
        i = j

        if isInteger && !overflow {
            if !negative, magnitude <= UInt64(Int64.max) {
                return .integer(Int64(magnitude))
            }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
        }
        let lexeme = String(decoding: UnsafeBufferPointer(start: p + start, count: j - start), as: UTF8.self)
        guard let number = Double(lexeme), number.isFinite else { throw fail(.invalidNumber, start) }
        return .double(number)
    }

    /// Reads a string whose opening quote is at `i`; leaves `i` after the closing quote.
    mutating func readString() throws(JSONError) -> String {
        let start = i + 1
        var j = start
        while j < end {
            let b = p[j]
            if b == UInt8(ascii: "\"") {
                i = j + 1
                return String(decoding: UnsafeBufferPointer(start: p + start, count: j - start), as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") { return try readEscapedString(start: start, firstEscape: j) }
            if b < 0x20 { throw fail(.unexpectedByte(b), j) }
            j = b < 0x80 ? j + 1 : try validateUTF8(at: j)
        }
        throw fail(.unexpectedEnd, end)
    }

    /// Continues `readString` from the first backslash, decoding into `scratch`.
    mutating func readEscapedString(start: Int, firstEscape: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        var j = firstEscape
        while j < end {
            let b = p[j]
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                scratch.append(contentsOf: UnsafeBufferPointer(start: p + runStart, count: j - runStart))
                if b == UInt8(ascii: "\"") {
                    i = j + 1
                    return String(decoding: scratch, as: UTF8.self)
                }
                j = try readEscape(at: j)
                runStart = j
            } else if b < 0x20 {
                throw fail(.unexpectedByte(b), j)
            } else {
                j = b < 0x80 ? j + 1 : try validateUTF8(at: j)
            }
        }
        throw fail(.unexpectedEnd, end)
    }

    /// Decodes the escape whose backslash is at `j` into `scratch`; returns the index after it.
    mutating func readEscape(at j: Int) throws(JSONError) -> Int {
        guard j + 1 < end else { throw fail(.unexpectedEnd, end) }
        let decoded: UInt8
        switch p[j + 1] {
        case UInt8(ascii: "\""): decoded = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): decoded = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): decoded = UInt8(ascii: "/")
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"): return try readUnicodeEscape(at: j)
        default: throw fail(.invalidEscape, j)
        }
        scratch.append(decoded)
        return j + 2
    }

    /// Decodes `\uXXXX` (and a following low surrogate when needed) at `j`.
    mutating func readUnicodeEscape(at j: Int) throws(JSONError) -> Int {
        let high = try hex4(at: j + 2, escapeStart: j)
        var scalar = high
        var next = j + 6
        if high >= 0xDC00 && high <= 0xDFFF { throw fail(.invalidUnicodeEscape, j) }
        if high >= 0xD800 && high <= 0xDBFF {
            // A high surrogate must be followed immediately by a `\u` low surrogate.
            guard next < end else { throw fail(.unexpectedEnd, end) }
            guard p[next] == UInt8(ascii: "\\") else { throw fail(.invalidUnicodeEscape, j) }
            guard next + 1 < end else { throw fail(.unexpectedEnd, end) }
            guard p[next + 1] == UInt8(ascii: "u") else { throw fail(.invalidUnicodeEscape, j) }
            let low = try hex4(at: next + 2, escapeStart: next)
            guard low >= 0xDC00 && low <= 0xDFFF else { throw fail(.invalidUnicodeEscape, j) }
            scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            next += 6
        }
        appendUTF8(scalar)
        return next
    }

    func hex4(at k: Int, escapeStart: Int) throws(JSONError) -> UInt32 {
        guard k + 4 <= end else { throw fail(.unexpectedEnd, end) }
        var result: UInt32 = 0
        for n in k..<(k + 4) {
            let b = p[n]
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw fail(.invalidUnicodeEscape, escapeStart)
            }
            result = result << 4 | UInt32(digit)
        }
        return result
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Validates the multi-byte UTF-8 sequence whose lead byte is at `j`; returns the index after it.
    /// Rejects overlong forms, UTF-8 encoded surrogates and code points above U+10FFFF.
    func validateUTF8(at j: Int) throws(JSONError) -> Int {
        var length = 3
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch p[j] {
        case 0xC2...0xDF: length = 2
        case 0xE0: low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: break
        case 0xED: high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw fail(.invalidUTF8, j)
        }
        for k in 1..<length {
            guard j + k < end else { throw fail(.unexpectedEnd, end) }
            let b = p[j + k]
            guard b >= low && b <= high else { throw fail(.invalidUTF8, j) }
            low = 0x80
            high = 0xBF
        }
        return j + length
    }
}
