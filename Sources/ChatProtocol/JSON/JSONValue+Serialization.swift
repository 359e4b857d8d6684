extension JSONValue {
    /// The compact JSON text of the value: no insignificant whitespace, object
    /// keys in insertion order. The same value always yields the same text.
    public func serialized() -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        serialize(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// Appends `value` in decimal, the bytes of `value.description`, without making a
    /// string.
    public static func writeInteger(_ value: Int64, into buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // The digits, last first, into the end of a stack buffer (20 fit any UInt64),
        // then appended at once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends the compact UTF-8 JSON text of the value to `buffer`.
    ///
    /// Non-finite doubles are written as `null`; finite doubles use Swift's
    /// shortest round-trip form (e.g. `0.25`, `1699900000.0`, `1e-05`).
    public func serialize(into buffer: inout [UInt8]) {
        switch self {
        case .null:
            buffer.append(contentsOf: "null".utf8)
        case .bool(let value):
            buffer.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value):
            JSONValue.writeInteger(value, into: &buffer)
        case .double(let value):
            if value.isFinite {
                buffer.append(contentsOf: value.description.utf8)
            } else {
                buffer.append(contentsOf: "null".utf8)
            }
        case .string(let value):
            JSONValue.writeString(value, into: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                element.serialize(into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let object):
            buffer.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in object {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(key, into: &buffer)
                buffer.append(UInt8(ascii: ":"))
                value.serialize(into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    /// How many bytes ``serialize(into:)`` appends for the value, counted without
    /// writing them.
    public var serializedCount: Int {
        switch self {
        case .null:
            return 4
        case .bool(let value):
            return value ? 4 : 5
        case .integer(let value):
            var magnitude = value.magnitude, digits = 1
            while magnitude >= 10 {
                magnitude /= 10
                digits += 1
            }
            return value < 0 ? digits + 1 : digits
        case .double(let value):
            return value.isFinite ? value.description.utf8.count : 4
        case .string(let value):
            return JSONValue.stringCount(value)
        case .array(let elements):
            var count = elements.isEmpty ? 2 : 1 + elements.count
            for element in elements { count += element.serializedCount }
            return count
        case .object(let object):
            var count = object.isEmpty ? 2 : 1 + object.count
            for (key, value) in object { count += JSONValue.stringCount(key) + 1 + value.serializedCount }
            return count
        }
    }

    /// How many bytes ``writeString(_:into:)`` appends for `string`.
    public static func stringCount(_ string: String) -> Int {
        if let count = string.utf8.withContiguousStorageIfAvailable(escapedCount) { return count + 2 }
        return Array(string.utf8).withUnsafeBufferPointer(escapedCount) + 2
    }

    private static func escapedCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = bytes.count
        for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: count += 1
            default: count += 5
            }
        }
        return count
    }

    /// Writes a quoted, escaped string, copying unescaped runs in bulk.
    static func writeString(_ string: String, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            writeEscaped(bytes, into: &buffer)
        }
        if done == nil {
            let copy = Array(string.utf8)
            copy.withUnsafeBufferPointer { writeEscaped($0, into: &buffer) }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        var runStart = 0
        for i in 0..<bytes.count {
            let byte = bytes[i]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") { continue }
            if runStart < i {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
            }
            runStart = i + 1
            buffer.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            default:
                let hexDigits: StaticString = "0123456789abcdef"
                let hex = hexDigits.utf8Start
                buffer.append(UInt8(ascii: "u"))
                buffer.append(UInt8(ascii: "0"))
                buffer.append(UInt8(ascii: "0"))
                buffer.append(hex[Int(byte >> 4)])
                buffer.append(hex[Int(byte & 0x0F)])
            }
        }
        if runStart < bytes.count {
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
    }
}
