import ChatProtocol
import EventLoop
@testable import MockChatServer
import MockChatTestSupport

/// A console's live stream read over a real socket, as the page reads it.
struct ConsoleStreamReading {
    let raw: RawConnection

    /// Opens `GET /control/console/events?since=SEQ` with the page's token.
    init(_ f: ServerFixture, since: Int = 0) throws {
        raw = try f.rawConnect()
        guard let token = f.server.consoleToken else { throw FixtureFailure("the server serves no console") }
        raw.write(Array("GET /control/console/events?since=\(since) HTTP/1.1\r\nHost: \(f.server.address)\r\nX-Console-Token: \(token)\r\n\r\n".utf8))
    }

    /// The JSON lines received so far (after the response head).
    var lines: [JSONValue] {
        let text = String(decoding: raw.received, as: UTF8.self)
        guard let start = text.range(of: "\r\n\r\n")?.upperBound else { return [] }
        return text[start...].split(separator: "\n").compactMap { try? JSONParser.parse(Array($0.utf8)) }
    }

    /// The newest sequence number the lines so far account for: an entry's `seq`, or
    /// the `to` of a routine record or a skip.
    var reached: Int {
        lines.compactMap { line in (line["seq"] ?? line["routine"]?["to"] ?? line["to"])?.intValue }.max().map(Int.init) ?? 0
    }
}
