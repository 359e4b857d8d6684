import ChatProtocol
import Testing

@Suite("RequestDecoder.compactPing")
struct CompactPingTests {
    func compact(_ text: String) -> RequestEnvelope? {
        Array(text.utf8).withUnsafeBytes { RequestDecoder.compactPing($0) }
    }

    func full(_ text: String) -> Result<RequestEnvelope, RequestRejection> {
        Array(text.utf8).withUnsafeBytes { RequestDecoder.decode($0) }
    }

    @Test("agrees with the full decoder on the frames it accepts")
    func agrees() throws {
        for text in [#"{"id":0,"op":"ping"}"#, #"{"id":7,"op":"ping"}"#, #"{"id":123456789012345678,"op":"ping"}"#] {
            let envelope = try #require(compact(text))
            #expect(full(text) == .success(envelope))
        }
    }

    @Test("leaves everything else to the full decoder")
    func declines() {
        for text in [#"{"id":01,"op":"ping"}"#, #"{"id":-1,"op":"ping"}"#, #"{"id":"7","op":"ping"}"#,
                     #"{"id": 7,"op":"ping"}"#, #"{"id":7,"op":"pong"}"#, #"{"id":,"op":"ping"}"#,
                     #"{"id":1234567890123456789,"op":"ping"}"#, #"{"id":7,"op":"ping"} "#, "", "{}"] {
            #expect(compact(text) == nil, "\(text)")
        }
    }
}
