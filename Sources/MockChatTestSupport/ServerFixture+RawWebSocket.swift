import ChatProtocol
import EventLoop
import MockChatServer
import Testing
import WireKit

// Raw WebSocket clients of the tests: requests written as text, a connection that has
// done the handshake (and logged in), and what came back on it.

/// A request as JSON text: `{"id":ID,"op":OP,...}`; `extra` is spliced in as is.
public func requestText(_ id: Int, _ op: String, _ extra: String = "") -> String {
    "{\"id\":\(id),\"op\":\"\(op)\"\(extra.isEmpty ? "" : ",")\(extra)}"
}

/// The login request used by raw clients.
public func loginText(_ id: Int = 1, uid: String, device: String, platform: String = "desktop") -> String {
    requestText(id, "login", "\"uid\":\"\(uid)\",\"authKey\":\"mockchat-dev-key\",\"deviceId\":\"\(device)\","
                + "\"platform\":\"\(platform)\",\"presence\":{\"mode\":\"all\"}")
}

extension RawConnection {
    /// Server messages received as text frames, parsed.
    public var messages: [ServerMessage] {
        frames.filter { $0.opcode == 1 }.compactMap { try? JSONParser.parse($0.text) }.compactMap(ServerMessage.init(json:))
    }

    /// The code of the server's close frame, if one arrived with a code.
    public var closeCode: UInt16? { frames.first { $0.opcode == 8 && $0.payload.count >= 2 }?.closeCode }

    /// Whether a close frame arrived (with or without a code).
    public var sawCloseFrame: Bool { frames.contains { $0.opcode == 8 } }

    /// The reason text of the server's close frame.
    public var closeReason: String? { frames.first { $0.opcode == 8 }?.closeReason }
}

extension ServerFixture {
    /// A plain TCP connection that has completed the WebSocket handshake and, with
    /// `uid`, logged in (desktop, subscribed to everybody). Frames go out with
    /// `raw.write(ClientFrame...)`; what comes back is in `raw.frames`.
    public func rawWebSocket(login uid: String? = nil, device: String = "raw",
                             sourceLocation: SourceLocation = #_sourceLocation) throws -> RawConnection {
        let raw = try rawConnect()
        raw.write(Array(handshakeRequest().utf8))
        guard loop.run(timeout: 5, until: { HTTPReply(raw.received) != nil || raw.isClosed }),
              HTTPReply(raw.received)?.status == 101 else {
            throw FixtureFailure("the handshake failed: \(String(decoding: raw.received, as: UTF8.self))")
        }
        if let uid {
            raw.write(ClientFrame.text(loginText(uid: uid, device: device)))
            guard loop.run(timeout: 5, until: { !raw.messages.isEmpty || raw.isClosed }),
                  raw.messages.first?.resultObject?["connectionId"] != nil else {
                throw FixtureFailure("the raw login of \(uid) failed: \(raw.messages)")
            }
        }
        settle(sourceLocation: sourceLocation)
        return raw
    }
}
