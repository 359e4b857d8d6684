/// An HTTP/1.1 response as a client received it.
public struct HTTPReply: Sendable, Equatable {
    /// The status code, e.g. 101 or 200.
    public var status: Int
    /// Header fields in the order they arrived, values trimmed.
    public var headers: [(name: String, value: String)]
    /// The body, as long as `Content-Length` said, or up to the end of the stream.
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Values of the header fields called `name`, compared case-insensitively.
    public func headerValues(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.compactMap { $0.name.lowercased() == wanted ? $0.value : nil }
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    public static func == (a: HTTPReply, b: HTTPReply) -> Bool {
        a.status == b.status && a.body == b.body && a.headers.map(\.name) == b.headers.map(\.name)
            && a.headers.map(\.value) == b.headers.map(\.value)
    }
}
