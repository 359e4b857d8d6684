import ChatProtocol
import EventLoop
import MockChatServer
import MockChatTestSupport
import Testing

/// With nothing traced, a logged-in client's compact ping is answered without the
/// engine's actions or a JSON tree; the replies and the session are those of the
/// general path, which a traced server takes.
@Suite("Ping fast path")
struct PingFastPathTests {
    /// What a client sees, and the session's ping time, for the same requests.
    func exchange(trace: TraceLog?) throws -> (messages: [ServerMessage], unparsed: [String], lastPingAt: Instant?) {
        let f = try ServerFixture(trace: trace)
        let client = try f.connect()
        client.send(text: #"{"id":1,"op":"ping"}"#)  // before login: refused
        f.settle()
        _ = client.login(uid: "alice", device: "a", platform: .desktop, presence: .none)
        for text in [#"{"id":3,"op":"ping"}"#, #"{"id":"four","op":"ping"}"#, #"{"id": 5,"op":"ping"}"#,
                     #"{"id":9223372036854775807,"op":"ping"}"#, #"{"id":06,"op":"ping"}"#] {
            _ = f.loop.clock.advance(to: f.loop.clock.now.advanced(by: 1_250))
            client.send(text: text)
            f.settle()
        }
        let session = f.server.engine.connections.first
        return (client.messages, client.unparsed, session?.lastPingAt)
    }

    @Test func theSameRepliesWithAndWithoutTheTrace() throws {
        let off = try exchange(trace: TraceLog(capacity: 0))
        let on = try exchange(trace: nil)
        #expect(off.messages.count == 7, "a refusal, the login, four pongs and an error")
        #expect(off.messages == on.messages)
        #expect(off.unparsed == on.unparsed)
        #expect(off.lastPingAt != nil)
        #expect(off.lastPingAt == on.lastPingAt)
    }
}
