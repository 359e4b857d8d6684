import MockChatCore
import Testing
import WireKit

@Suite("Upgrade request")
struct UpgradeRequestTests {
    let sample = UpgradeRequest(host: "127.0.0.1:8080", key: "dGhlIHNhbXBsZSBub25jZQ==")

    @Test func theAcceptValueIsTheRFCExample() {
        // RFC 6455 §1.3.
        #expect(sample.expectedAccept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(WebSocketAccept.value(forKey: "x3JJHMbDL1EzLkh9GBhXDw==") == "HSmrc0sMlYUkAGmm5OPpG2HaGWk=")
    }

    @Test func theRequestIsTheDocumentedUpgrade() {
        #expect(String(decoding: sample.bytes, as: UTF8.self)
                == "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    }

    @Test func aSeededKeyIsSixteenBytesAndReproducible() {
        var first = SplitMix64(seed: 3), second = SplitMix64(seed: 3)
        let a = UpgradeRequest(host: "h", random: &first), b = UpgradeRequest(host: "h", random: &second)
        #expect(a.key == b.key)
        #expect(a.key.count == 24)
    }

    @Test func theCheckAcceptsTheRightAnswerAndNamesWrongOnes() {
        let good = HTTPReply(status: 101, headers: [("Upgrade", "websocket"), ("sec-websocket-accept", sample.expectedAccept)])
        #expect(sample.check(good) == nil)
        let wrongKey = HTTPReply(status: 101, headers: [("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo")])
        #expect(sample.check(wrongKey) == .invalidResponse("wrong Sec-WebSocket-Accept"))
        let refused = HTTPReply(status: 503, body: Array("full".utf8))
        #expect(sample.check(refused) == .rejected(status: 503, body: "full"))
        // A check is not satisfied by another key's answer.
        let other = UpgradeRequest(host: "127.0.0.1:8080", key: "x3JJHMbDL1EzLkh9GBhXDw==")
        #expect(other.check(good) != nil)
    }
}
