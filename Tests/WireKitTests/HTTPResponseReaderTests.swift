import Testing
import WireKit

@Suite("HTTP response reader")
struct HTTPResponseReaderTests {
    func read(_ text: String, pieces: Int = 1, end: Bool = false) -> HTTPResponseReader {
        var reader = HTTPResponseReader()
        let bytes = Array(text.utf8)
        let size = max(1, bytes.count / pieces)
        var start = 0
        while start < bytes.count {
            reader.feed(bytes[start..<min(bytes.count, start + size)])
            start += size
        }
        if end { reader.finish() }
        return reader
    }

    @Test func theBodyIsContentLengthBytesWhateverFollows() throws {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 2\r\n\r\n{}EXTRA"
        for pieces in [1, 3, text.utf8.count] {
            let reader = read(text, pieces: pieces)
            let reply = try #require(reader.reply)
            #expect(reader.isComplete, "in \(pieces) pieces")
            #expect(reply.status == 200)
            #expect(reply.text == "{}")
            #expect(reply.headerValues("Content-Type") == ["application/json"])
            #expect(reader.remainder == Array("EXTRA".utf8))
        }
    }

    @Test func aBodyIsIncompleteUntilItsLengthArrives() {
        var reader = read("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nbus")
        #expect(!reader.isComplete)
        #expect(reader.state == .body(length: 5))
        reader.feed(Array("y!".utf8))
        #expect(reader.reply?.text == "busy!")
    }

    @Test func withoutALengthTheBodyRunsToTheEndOfTheStream() {
        var reader = read("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nline 1\n")
        #expect(reader.state == .body(length: nil))
        reader.feed(Array("line 2\n".utf8))
        reader.finish()
        #expect(reader.isComplete)
        #expect(reader.reply?.text == "line 1\nline 2\n")
    }

    @Test func switchingProtocolsHasNoBodyAndKeepsTheFrames() {
        var reader = read("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
        reader.feed([0x81, 0])
        #expect(reader.isComplete)
        #expect(reader.reply?.body == [])
        #expect(reader.takeRemainder() == [0x81, 0])
        #expect(reader.remainder.isEmpty)
    }

    @Test func malformedAnswersAreNamed() {
        #expect(read("SSH-2.0-OpenSSH\r\n\r\n").malformed?.hasPrefix("not an HTTP status line") == true)
        #expect(read("HTTP/1.1 200 OK\r\nno colon\r\n\r\n").malformed?.hasPrefix("not a header line") == true)
        #expect(read("HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n").malformed == "Content-Length '-3' is not a length")
        #expect(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").state == .failed)
        #expect(read("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", end: true).malformed
                == "the stream ended inside the response")
        var huge = HTTPResponseReader(maxHeadBytes: 32)
        huge.feed(Array(repeating: UInt8(ascii: "a"), count: 40))
        #expect(huge.state == .failed)
    }
}
