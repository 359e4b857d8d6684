import LoadGenerator
import Testing

@Suite("Server frame kinds")
struct ServerFrameKindTests {
    @Test("replies and presence events are recognised by their first bytes")
    func kinds() {
        func kind(_ text: String) -> ServerFrameKind {
            Array(text.utf8).withUnsafeBytes { ServerFrameKind($0) }
        }
        #expect(kind(#"{"id":42,"result":{"pong":true,"serverTime":1.0}}"#) == .reply(id: 42, ok: true))
        #expect(kind(#"{"id":3,"error":{"errorCode":"ERR_NOT_LOGGED_IN"}}"#) == .reply(id: 3, ok: false))
        #expect(kind(#"{"event":"user.online","user":{"uid":"bench-u7","status":"online"}}"#)
                == .presence(online: true, uid: "bench-u7"))
        #expect(kind(#"{"event":"user.offline","user":{"uid":"bench-u7"}}"#) == .presence(online: false, uid: "bench-u7"))
        // Other key orders and spacing go through the parser.
        #expect(kind(#"{"result": {}, "id": 5}"#) == .reply(id: 5, ok: true))
        #expect(kind(#"{"user":{"uid":"x"},"event":"user.online"}"#) == .presence(online: true, uid: "x"))
        #expect(kind(#"{"event":"device.kicked","reason":"r"}"#) == .event("device.kicked"))
        #expect(kind(#"{"id":"s","result":{}}"#) == .reply(id: nil, ok: true))
        #expect(kind("not json") == .unknown)
    }
}
