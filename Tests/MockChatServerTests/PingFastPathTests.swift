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
    /// What a client sees, the session's ping time and the trace's lines from the
    /// client's connection on (without their sequence numbers), for the same requests.
    /// With `general`, a scripted reply that matches none of them sends every frame
    /// down the general path.
    func exchange(trace: TraceLog?, general: Bool = false) throws
        -> (messages: [ServerMessage], unparsed: [String], lastPingAt: Instant?, trace: [String]) {
        let f = try ServerFixture(trace: trace)
        if general {
            let script = #"{"fault":"reply","op":"users.get","match":{"uid":"nobody"},"result":{"user":null}}"#
            #expect(try f.control("POST", "/control/faults", body: script).status == 200)
        }
        let start = f.server.trace.lastSequence
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
        let lines = f.server.trace.entries(after: start).map { entry in
            var entry = entry
            entry.sequence = 0
            return String(decoding: TraceLog.jsonLines([entry]), as: UTF8.self)
        }
        return (client.messages, client.unparsed, session?.lastPingAt, lines)
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

    /// A traced server answers compact pings on the fast path too, keeping the ping's
    /// and the pong's text as they are: its trace is the general path's, line for line.
    @Test func theFastPathTracesWhatTheGeneralPathTraces() throws {
        let fast = try exchange(trace: nil)
        let general = try exchange(trace: nil, general: true)
        #expect(fast.messages == general.messages)
        #expect(fast.trace.filter { $0.contains(#""pong""#) }.count == 4)
        #expect(fast.trace == general.trace)
    }
}
