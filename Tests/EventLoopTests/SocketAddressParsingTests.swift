import EventLoop
import Testing

/// Every `--server` option reads its address the same way.
@Suite struct SocketAddressParsingTests {
    @Test func acceptsURLsAndHostPort() {
        for text in ["ws://127.0.0.1:8080", "ws://127.0.0.1:8080/v1/ws", "ws://127.0.0.1:8080/", "http://127.0.0.1:8080",
                     "127.0.0.1:8080", "localhost:8080"] {
            #expect(SocketAddress(server: text) == SocketAddress(host: "127.0.0.1", port: 8080), "\(text)")
        }
        #expect(SocketAddress(server: "[::1]:9000") == SocketAddress(host: "::1", port: 9000))
    }

    @Test func rejectsWhatIsNoAddress() {
        for text in ["127.0.0.1", "ws://127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", ":8080", "ws://h:1/other", "h:port"] {
            #expect(SocketAddress(server: text) == nil, "\(text)")
        }
    }
}
