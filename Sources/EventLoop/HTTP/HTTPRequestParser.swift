/// An incremental, strict parser for one HTTP/1.x request (RFC 9112).
///
/// Bytes may be fed in pieces of any size, down to one byte. Each byte of
/// the head is examined once, so total work is linear in the input no
/// matter how it is split. Limits from `HTTPLimits` are enforced as soon as
/// they are crossed, without waiting for the end of the head.
///
/// The parser handles exactly one request: once `feed` has returned
/// `.request` or `.failure`, the caller must not feed it again (doing so
/// yields a 500 failure). Bytes that follow the request are handed back as
/// `remainder`.
public struct HTTPRequestParser: Sendable {
    /// The outcome of feeding bytes.
    public enum Result: Sendable, Equatable {
        /// The request is not complete yet.
        case needMore
        /// A complete request, and any bytes received after it.
        case request(HTTPRequest, remainder: [UInt8])
        /// The request is invalid; send this response and close the connection.
        case failure(HTTPResponse)
    }

    private enum Phase: Sendable {
        case head
        case body(length: Int)
        case finished
    }

    private let limits: HTTPLimits
    private var phase = Phase.head
    private var buffer: [UInt8] = []
    /// Next byte of the head to examine.
    private var scanOffset = 0
    /// Start of the line currently being scanned.
    private var lineStart = 0
    /// Where the body starts, once the head is complete.
    private var bodyStart = 0
    private var method = ""
    private var target = ""
    private var version = ""
    private var haveRequestLine = false
    private var headers: [(name: String, value: String)] = []

    /// Creates a parser enforcing `limits`.
    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Consumes the bytes in `bytes`.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Result {
        guard !isFinished else { return reuseFailure() }
        buffer.append(contentsOf: bytes)
        return advance()
    }

    /// Consumes `bytes`.
    public mutating func feed(_ bytes: [UInt8]) -> Result {
        bytes.withUnsafeBytes { feed($0) }
    }

    private var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    private func reuseFailure() -> Result {
        .failure(.rejection(status: 500, "request parser fed after it finished\n"))
    }

    private mutating func advance() -> Result {
        if case .head = phase {
            if let result = scanHead() { return finish(result) }
        }
        if case .body(let length) = phase {
            guard buffer.count - bodyStart >= length else { return .needMore }
            let bodyEnd = bodyStart + length
            let request = HTTPRequest(
                method: method, target: target, version: version, headers: headers,
                body: Array(buffer[bodyStart..<bodyEnd]))
            return finish(.request(request, remainder: Array(buffer[bodyEnd...])))
        }
        return .needMore
    }

    private mutating func finish(_ result: Result) -> Result {
        phase = .finished
        buffer = []
        headers = []
        return result
    }

    private func fail(_ status: Int, _ message: String) -> Result {
        .failure(.rejection(status: status, message + "\n"))
    }

    /// Scans new head bytes line by line. Returns a failure, or nil when more
    /// bytes are needed or the head is complete (then `phase` has moved on).
    private mutating func scanHead() -> Result? {
        while scanOffset < buffer.count {
            if scanOffset >= limits.maxHeadBytes {
                return fail(431, "request head larger than \(limits.maxHeadBytes) bytes")
            }
            let byte = buffer[scanOffset]
            scanOffset += 1
            guard byte == lf else { continue }
            var end = scanOffset - 1
            if end > lineStart && buffer[end - 1] == cr { end -= 1 }
            let start = lineStart
            lineStart = scanOffset
            if let failure = processLine(start..<end) { return failure }
            if case .head = phase { continue }
            return nil
        }
        return nil
    }

    private mutating func processLine(_ range: Range<Int>) -> Result? {
        if !haveRequestLine {
            // RFC 9112 section 2.2: empty lines before the request line are ignored.
            if range.isEmpty { return nil }
            return parseRequestLine(buffer[range])
        }
        if range.isEmpty { return endOfHead() }
        let line = buffer[range]
        if line.first == sp || line.first == htab {
            return fail(400, "obsolete line folding is not accepted")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            return fail(400, "header line without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(httpIsTokenByte) else {
            return fail(400, "invalid header field name")
        }
        var valueStart = colon + 1
        var valueEnd = line.endIndex
        while valueStart < valueEnd, buffer[valueStart] == sp || buffer[valueStart] == htab { valueStart += 1 }
        while valueEnd > valueStart, buffer[valueEnd - 1] == sp || buffer[valueEnd - 1] == htab { valueEnd -= 1 }
        let value = buffer[valueStart..<valueEnd]
        guard value.allSatisfy({ $0 == htab || ($0 >= 0x20 && $0 < 0x7F) }) else {
            return fail(400, "header field value contains a control or non-ASCII byte")
        }
        if headers.count >= limits.maxHeaderCount {
            return fail(431, "more than \(limits.maxHeaderCount) header fields")
        }
        headers.append((name: String(decoding: name, as: UTF8.self),
                        value: String(decoding: value, as: UTF8.self)))
        return nil
    }

    private mutating func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result? {
        let parts = line.split(separator: sp, maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return fail(400, "malformed request line") }
        let (methodBytes, targetBytes, versionBytes) = (parts[0], parts[1], parts[2])
        guard !methodBytes.isEmpty, methodBytes.allSatisfy(httpIsTokenByte) else {
            return fail(400, "invalid method")
        }
        guard targetBytes.first == UInt8(ascii: "/"),
              targetBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return fail(400, "request target must be an absolute path")
        }
        let versionText = Array(versionBytes)
        let isDigit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
        guard versionText.count == 8, versionText.starts(with: Array("HTTP/".utf8)),
              isDigit(versionText[5]), versionText[6] == UInt8(ascii: "."), isDigit(versionText[7]) else {
            return fail(400, "malformed HTTP version")
        }
        let versionString = String(decoding: versionText, as: UTF8.self)
        guard versionString == "HTTP/1.1" || versionString == "HTTP/1.0" else {
            return fail(505, "only HTTP/1.1 and HTTP/1.0 are supported")
        }
        method = String(decoding: methodBytes, as: UTF8.self)
        target = String(decoding: targetBytes, as: UTF8.self)
        version = versionString
        haveRequestLine = true
        return nil
    }

    /// Decides how the body is framed (RFC 9112 section 6).
    private mutating func endOfHead() -> Result? {
        if headers.contains(where: { httpASCIIEqualsIgnoringCase($0.name, "Transfer-Encoding") }) {
            return fail(501, "Transfer-Encoding is not supported")
        }
        let lengths = headers.filter { httpASCIIEqualsIgnoringCase($0.name, "Content-Length") }.map(\.value)
        var length = 0
        if let first = lengths.first {
            guard lengths.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }) else {
                return fail(400, "Content-Length must be a decimal number")
            }
            guard lengths.allSatisfy({ $0 == first }) else {
                return fail(400, "conflicting Content-Length values")
            }
            // Accumulate with an early exit so huge numbers cannot overflow.
            for digit in first.utf8 {
                length = length * 10 + Int(digit - 0x30)
                if length > limits.maxBodyBytes {
                    return fail(413, "body larger than \(limits.maxBodyBytes) bytes")
                }
            }
        }
        bodyStart = scanOffset
        phase = .body(length: length)
        return nil
    }
}

private let cr: UInt8 = 0x0D
private let lf: UInt8 = 0x0A
private let sp: UInt8 = 0x20
private let htab: UInt8 = 0x09

/// Whether `byte` may appear in a token (RFC 9110 section 5.6.2).
func httpIsTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
         UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
         UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
         UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default: return false
    }
}
