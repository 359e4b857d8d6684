/// A fully received HTTP/1.x request.
///
/// Header names keep the spelling the client used and the fields keep their
/// order; use `headerValues(_:)` for case-insensitive lookup
/// (RFC 9110 section 5.1).
public struct HTTPRequest: Sendable, Equatable {
    /// The request method, e.g. `GET`. Methods are case-sensitive.
    public var method: String
    /// The request target in origin form, e.g. `/control/state?x=1`.
    public var target: String
    /// The protocol version as sent, `HTTP/1.1` or `HTTP/1.0`.
    public var version: String
    /// Header fields in arrival order, values with surrounding whitespace removed.
    public var headers: [(name: String, value: String)]
    /// The request body (empty when there was no `Content-Length`).
    public var body: [UInt8]

    /// Creates a request from its parts.
    public init(
        method: String,
        target: String,
        version: String = "HTTP/1.1",
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// All values of the fields called `name` (compared case-insensitively), in order.
    public func headerValues(_ name: String) -> [String] {
        headers.compactMap { httpASCIIEqualsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// The target without its query string.
    public var path: String {
        if let mark = target.firstIndex(of: "?") {
            return String(target[..<mark])
        }
        return target
    }

    /// The query string split into `key=value` pairs and percent-decoded.
    ///
    /// A key without `=` maps to the empty string, a repeated key keeps its
    /// last value, `+` is left as is, and malformed `%` escapes are kept
    /// literally.
    public var query: [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var result: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: true) {
            if let eq = pair.firstIndex(of: "=") {
                let key = percentDecode(pair[..<eq])
                result[key] = percentDecode(pair[pair.index(after: eq)...])
            } else {
                result[percentDecode(pair)] = ""
            }
        }
        return result
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version
            && lhs.body == rhs.body && lhs.headers.count == rhs.headers.count
            && zip(lhs.headers, rhs.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Compares two strings ignoring the case of ASCII letters only.
func httpASCIIEqualsIgnoringCase(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
    let x = a.utf8, y = b.utf8
    guard x.count == y.count else { return false }
    return zip(x, y).allSatisfy { httpASCIILower($0) == httpASCIILower($1) }
}

@inline(__always)
func httpASCIILower(_ byte: UInt8) -> UInt8 {
    (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: return byte - 0x30
    case 0x41...0x46: return byte - 0x41 + 10
    case 0x61...0x66: return byte - 0x61 + 10
    default: return nil
    }
}

/// Decodes `%XX` escapes; invalid UTF-8 in the result is replaced.
private func percentDecode(_ text: Substring) -> String {
    let source = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(source.count)
    var i = 0
    while i < source.count {
        if source[i] == UInt8(ascii: "%"), i + 2 < source.count,
           let hi = hexValue(source[i + 1]), let lo = hexValue(source[i + 2]) {
            out.append(hi << 4 | lo)
            i += 3
        } else {
            out.append(source[i])
            i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}
