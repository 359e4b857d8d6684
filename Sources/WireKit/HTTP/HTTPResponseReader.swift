/// Reads one HTTP/1.1 response from bytes fed in any pieces (RFC 9112 §6.3): the head,
/// then a body of `Content-Length` bytes, none for 1xx, 204 and 304, or, without a
/// length, everything up to the end of the stream (``finish()``). Chunked bodies are
/// not read: MockChat's server never sends them.
///
/// Bytes after the response (the first frames after a 101) stay in ``remainder``.
public struct HTTPResponseReader: Sendable {
    /// Where the reader is.
    public enum State: Sendable, Equatable {
        /// Waiting for the end of the head.
        case head
        /// Reading the body (its length, or nil until the stream ends).
        case body(length: Int?)
        /// The response is complete: see ``reply``.
        case complete
        /// The bytes are not an HTTP response: see ``malformed``.
        case failed
    }

    /// Largest head accepted.
    public let maxHeadBytes: Int
    /// Where the reader is.
    public private(set) var state = State.head
    /// The status and headers as soon as the head is in, the body once complete.
    public private(set) var reply: HTTPReply?
    /// Why the bytes are not a response.
    public private(set) var malformed: String?
    private var buffer: [UInt8] = []
    /// How far the search for the blank line has got.
    private var scanned = 0

    public init(maxHeadBytes: Int = 16 * 1024) { self.maxHeadBytes = maxHeadBytes }

    /// Whether the whole response has arrived.
    public var isComplete: Bool { state == .complete }

    /// Received bytes not yet part of the response: the partial head or body while
    /// reading, what followed the response once it is complete.
    public var remainder: [UInt8] { buffer }

    /// Appends received bytes and reads as far as they go.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
        if state == .head { readHead() }
        if case .body(let length?) = state, buffer.count >= length {
            reply?.body = Array(buffer[..<length])
            buffer.removeFirst(length)
            state = .complete
        }
    }

    /// The stream ended: a body without a length is complete; anything else
    /// unfinished is malformed.
    public mutating func finish() {
        switch state {
        case .body(length: nil):
            reply?.body = buffer
            buffer = []
            state = .complete
        case .head, .body:
            fail("the stream ended inside the response")
        case .complete, .failed:
            break
        }
    }

    /// Takes the bytes that followed a complete response.
    public mutating func takeRemainder() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    private mutating func fail(_ reason: String) {
        malformed = reason
        state = .failed
    }

    private mutating func readHead() {
        var end: Int?
        var index = max(0, scanned - 3)
        while index + 4 <= buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                end = index
                break
            }
            index += 1
        }
        scanned = buffer.count
        guard let end else {
            if buffer.count > maxHeadBytes { fail("response head over \(maxHeadBytes) bytes") }
            return
        }
        let text = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), statusLine[1].count == 3,
              let status = Int(statusLine[1]) else {
            return fail("not an HTTP status line: \(text.prefix(80))")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return fail("not a header line: \(line.prefix(80))") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaceAndTab()))
        }
        let head = HTTPReply(status: status, headers: headers)
        reply = head
        if (100..<200).contains(status) || status == 204 || status == 304 {
            state = .complete
        } else if !head.headerValues("Transfer-Encoding").isEmpty {
            fail("chunked or encoded bodies are not read")
        } else if let declared = head.headerValues("Content-Length").first {
            guard let length = Int(declared), length >= 0 else { return fail("Content-Length '\(declared)' is not a length") }
            state = .body(length: length)
        } else {
            state = .body(length: nil)
        }
    }
}

private extension Substring {
    func trimmingSpaceAndTab() -> String {
        var trimmed = self
        while let first = trimmed.first, first == " " || first == "\t" { trimmed.removeFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
        return String(trimmed)
    }
}
