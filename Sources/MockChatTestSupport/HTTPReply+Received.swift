import ChatProtocol
import EventLoop
import WireKit

extension HTTPReply {
    /// The response at the start of `bytes`, read to the end of what arrived (a
    /// connection the server has closed); nil while its head is incomplete.
    public init?(_ bytes: [UInt8]) {
        var reader = HTTPResponseReader()
        reader.feed(bytes)
        reader.finish()
        guard let reply = reader.reply else { return nil }
        self = reply
    }

    /// The body parsed as JSON.
    public var json: JSONValue? { try? JSONParser.parse(body) }
}

extension RawConnection {
    /// The server's HTTP response, read to the end of what arrived.
    public var reply: HTTPReply? { HTTPReply(received) }
}
