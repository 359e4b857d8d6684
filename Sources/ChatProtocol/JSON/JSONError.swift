/// A failure to parse JSON text, with the byte offset at which it was detected.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The input ended before a complete value was read.
        case unexpectedEnd
        /// A byte that cannot appear at this position (including control characters inside strings).
        case unexpectedByte(UInt8)
        /// A malformed number: leading zero, missing digits, or a magnitude outside the finite `Double` range.
        case invalidNumber
        /// A backslash followed by a character that is not a JSON escape.
        case invalidEscape
        /// A string containing a byte sequence that is not well-formed UTF-8.
        case invalidUTF8
        /// A `\u` escape with bad hex digits or an unpaired surrogate.
        case invalidUnicodeEscape
        /// Arrays and objects nested deeper than `limit`.
        case tooDeep(limit: Int)
        /// Non-whitespace bytes after the top-level value.
        case trailingData
        /// The input exceeds a size limit of `limit` bytes (raised by callers that enforce one).
        case tooLarge(limit: Int)
    }

    /// What went wrong.
    public var kind: Kind
    /// Byte offset into the input at which the problem was detected.
    public var offset: Int

    /// Creates an error of the given kind at the given byte offset.
    public init(kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// A one-line human readable explanation, e.g. `unexpected byte 0x7d at offset 12`.
    public var description: String {
        let what: String
        switch kind {
        case .unexpectedEnd:
            what = "unexpected end of input"
        case .unexpectedByte(let byte):
            let hex = String(byte, radix: 16)
            what = "unexpected byte 0x" + (hex.count < 2 ? "0" + hex : hex)
        case .invalidNumber:
            what = "invalid number"
        case .invalidEscape:
            what = "invalid escape sequence"
        case .invalidUTF8:
            what = "invalid UTF-8"
        case .invalidUnicodeEscape:
            what = "invalid unicode escape"
        case .tooDeep(let limit):
            what = "nesting deeper than \(limit) levels"
        case .trailingData:
            what = "trailing data after value"
        case .tooLarge(let limit):
            what = "input larger than \(limit) bytes"
        }
        return "\(what) at offset \(offset)"
    }
}
