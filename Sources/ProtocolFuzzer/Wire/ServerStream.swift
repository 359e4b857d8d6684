/// Reads what the server sends on one connection: an HTTP response head (and body),
/// then, after a 101, WebSocket frames. Server frames are never masked; one that is,
/// or that cannot be parsed, is reported in ``malformed``.
struct ServerStream: Sendable {
    /// The HTTP response.
    struct Response: Sendable, Equatable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        static func == (a: Response, b: Response) -> Bool {
            a.status == b.status && a.body == b.body && a.headers.map(\.name) == b.headers.map(\.name)
                && a.headers.map(\.value) == b.headers.map(\.value)
        }
    }

    /// One frame from the server.
    struct Frame: Sendable, Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]

        /// The code of a close frame (1005 when it carries none).
        var closeCode: UInt16? {
            guard opcode == 8 else { return nil }
            return payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005
        }
    }

    private(set) var response: Response?
    private(set) var frames: [Frame] = []
    private(set) var malformed: String?
    private var buffer: [UInt8] = []
    /// Frames already handed out by ``takeFrames()``.
    private var taken = 0

    /// Appends received bytes and parses what is complete.
    mutating func feed(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
        if response == nil { parseResponse() }
        if response?.status == 101 { parseFrames() }
    }

    /// Bytes received and not yet understood.
    var pendingBytes: Int { buffer.count }

    /// Frames that arrived since the last call.
    mutating func takeFrames() -> ArraySlice<Frame> {
        defer { taken = frames.count }
        return frames[taken...]
    }

    private mutating func parseResponse() {
        guard let end = buffer.firstRange(of: [13, 10, 13, 10]) else { return }
        let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            malformed = "not an HTTP status line: \(head.prefix(80))"
            return
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        let bodyStart = end.upperBound
        guard status == 101 || buffer.count - bodyStart >= length else { return }
        let bodyEnd = status == 101 ? bodyStart : bodyStart + length
        response = Response(status: status, headers: headers, body: Array(buffer[bodyStart..<bodyEnd]))
        buffer.removeFirst(bodyEnd)
    }

    private mutating func parseFrames() {
        while buffer.count >= 2 {
            let first = buffer[0], second = buffer[1]
            guard second & 0x80 == 0 else {
                malformed = "the server sent a masked frame"
                return
            }
            var length = UInt64(second & 0x7F)
            var offset = 2
            if length == 126 {
                guard buffer.count >= 4 else { return }
                length = UInt64(buffer[2]) << 8 | UInt64(buffer[3])
                offset = 4
            } else if length == 127 {
                guard buffer.count >= 10 else { return }
                length = buffer[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
                offset = 10
            }
            guard length <= 1 << 24 else {
                malformed = "the server announced a frame of \(length) bytes"
                return
            }
            guard buffer.count >= offset + Int(length) else { return }
            frames.append(Frame(fin: first & 0x80 != 0, opcode: first & 0x0F,
                                payload: Array(buffer[offset..<offset + Int(length)])))
            buffer.removeFirst(offset + Int(length))
        }
    }
}
