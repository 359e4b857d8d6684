/// An HTTP/1.1 response ready to be written to a connection.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Header fields in the order they are written. A `Content-Length` field
    /// given here is ignored; `serialized()` writes the real one.
    public var headers: [(name: String, value: String)]
    /// The response body.
    public var body: [UInt8]

    /// Creates a response from its parts.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers.map { (name: $0.0, value: $0.1) }
        self.body = body
    }

    /// A response whose body is JSON (`Content-Type: application/json`).
    public static func json(status: Int, body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// A response whose body is the UTF-8 encoding of a JSON text.
    public static func json(status: Int, body: String) -> HTTPResponse {
        json(status: status, body: Array(body.utf8))
    }

    /// A response with a plain-text UTF-8 body.
    public static func text(status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: Array(text.utf8))
    }

    /// A plain-text error response that also tells the client the
    /// connection will be closed (`Connection: close`).
    public static func rejection(status: Int, _ text: String) -> HTTPResponse {
        var response = HTTPResponse.text(status: status, text)
        response.headers.append((name: "Connection", value: "close"))
        return response
    }

    /// Values of the header fields called `name`, compared case-insensitively.
    public func headerValues(_ name: String) -> [String] {
        headers.compactMap { httpASCIIEqualsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// The standard reason phrase for `status`, or `Unknown`.
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }

    /// The status line and header lines of a response whose body follows as it is
    /// produced and ends with the stream: no `Content-Length`, and `Connection: close`.
    public func serializedHead() -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(for: status))\r\n"
        for (name, value) in headers where !httpASCIIEqualsIgnoringCase(name, "Content-Length")
            && !httpASCIIEqualsIgnoringCase(name, "Connection") {
            head += "\(name): \(value)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8)
    }

    /// The wire form: status line, header lines, `Content-Length`, blank
    /// line, body.
    ///
    /// `Content-Length` is always written with the body's size, except for
    /// 1xx and 204 responses, which must not carry it (RFC 9110 section 8.6);
    /// their body is not written either.
    public func serialized() -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(for: status))\r\n"
        for (name, value) in headers where !httpASCIIEqualsIgnoringCase(name, "Content-Length") {
            head += "\(name): \(value)\r\n"
        }
        let bodiless = (100..<200).contains(status) || status == 204
        if !bodiless {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var out = Array(head.utf8)
        if !bodiless {
            out.append(contentsOf: body)
        }
        return out
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.headers.count == rhs.headers.count
            && zip(lhs.headers, rhs.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
