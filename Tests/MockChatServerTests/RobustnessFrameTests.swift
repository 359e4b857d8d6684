import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// Rows 10-19 of the robustness checklist: WebSocket frames (RFC 6455 section 5), built
/// by hand and sent after a valid handshake and login, while a bystander stays connected.
extension Robustness {
    @Suite struct Frames {
        /// Logs `uid` in over a raw socket, sends `bytes`, and checks what the server
        /// does: a close frame with `code`, then the end of the TCP stream, `uid`
        /// announced offline exactly once, and the trace recording the close.
        @discardableResult
        private func expectClose(_ f: ServerFixture, _ bystander: Bystander, after bytes: [UInt8], code: UInt16,
                                 uid: String = "bob", _ what: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> RawConnection {
            let raw = try f.rawWebSocket(login: uid, device: "raw-\(uid)", sourceLocation: sourceLocation)
            let sessions = f.server.sessionCount
            let before = bystander.events(about: uid)
            let traceBefore = f.server.trace.entries.last?.sequence ?? 0
            let closed = f.sendAndAwaitClose(raw, bytes)
            #expect(closed, "\(what): the server kept the connection open", sourceLocation: sourceLocation)
            let received = raw.closeCode
            #expect(received == code, "\(what): close \(String(describing: received)), reason \(String(describing: raw.closeReason))",
                    sourceLocation: sourceLocation)
            #expect(raw.endError == nil, "\(what): the stream ended with \(String(describing: raw.endError))",
                    sourceLocation: sourceLocation)
            #expect(Array(bystander.events(about: uid).dropFirst(before.count)) == ["user.offline"], "\(what)",
                    sourceLocation: sourceLocation)
            let closes = f.server.trace.entries(after: traceBefore).filter { $0.kind == .close }
            #expect(closes.map(\.code) == [code], "\(what): trace \(closes.map { "\($0.code.map(String.init) ?? "-") \($0.text ?? "")" })",
                    sourceLocation: sourceLocation)
            #expect(f.server.sessionCount == sessions - 1, "\(what)", sourceLocation: sourceLocation)
            return raw
        }

        @Test func row10_unmaskedClientFramesAreClosedWith1002() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let cases: [(String, [UInt8])] = [
                ("unmasked text", ClientFrame.make(opcode: 1, payload: Array(requestText(2, "ping").utf8), masked: false)),
                ("unmasked binary", ClientFrame.make(opcode: 2, payload: [1, 2, 3], masked: false)),
                ("unmasked ping", ClientFrame.make(opcode: 9, payload: [], masked: false)),
                ("unmasked close", ClientFrame.make(opcode: 8, payload: [0x03, 0xE8], masked: false)),
                ("unmasked continuation of a masked start",
                 ClientFrame.make(opcode: 1, payload: [0x7B], fin: false)
                    + ClientFrame.make(opcode: 0, payload: [0x7D], masked: false)),
            ]
            for (what, bytes) in cases {
                let raw = try expectClose(f, bystander, after: bytes, code: 1002, what)
                #expect(raw.messages.count == 1, "\(what): the frame was processed")
            }
            reportFigure(10, "\(cases.count) unmasked frames, each closed with 1002, nothing processed")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row11_reservedBitsAndOpcodesAreClosedWith1002() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let ping = Array(requestText(2, "ping").utf8)
            var cases: [(String, [UInt8])] = [1, 2, 4].map { rsv in
                ("RSV \(rsv)", ClientFrame.make(opcode: 1, payload: ping, rsv: UInt8(rsv)))
            }
            cases.append(("RSV1 on a ping", ClientFrame.make(opcode: 9, rsv: 4)))
            for opcode: UInt8 in [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
                cases.append(("opcode \(opcode)", ClientFrame.make(opcode: opcode, payload: ping)))
            }
            for (what, bytes) in cases {
                let raw = try expectClose(f, bystander, after: bytes, code: 1002, what)
                #expect(raw.messages.count == 1, "\(what): the frame was processed")
            }
            reportFigure(11, "\(cases.count) frames with RSV bits or reserved opcodes, each closed with 1002")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row12_oversizedOrFragmentedControlFramesAreClosedWithAReason() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            // The limit itself is fine: a 125-byte ping gets its pong.
            let fine = try f.rawWebSocket(login: "carol", device: "fine")
            fine.write(ClientFrame.make(opcode: 9, payload: Array(repeating: 0x61, count: 125)))
            f.settle()
            #expect(fine.frames.last?.opcode == 10)
            #expect(fine.frames.last?.payload.count == 125)
            let cases: [(String, [UInt8])] = [
                ("126-byte ping", ClientFrame.make(opcode: 9, payload: Array(repeating: 0x61, count: 126))),
                ("126-byte pong", ClientFrame.make(opcode: 10, payload: Array(repeating: 0x61, count: 126))),
                ("126-byte close", ClientFrame.make(opcode: 8, payload: [0x03, 0xE8] + Array(repeating: 0x61, count: 124))),
                ("ping with a 64-bit length", ClientFrame.make(opcode: 9, payload: [], declaredLength: 70_000)),
                ("fragmented ping", ClientFrame.make(opcode: 9, payload: [1], fin: false) + ClientFrame.make(opcode: 0, payload: [2])),
                ("fragmented close", ClientFrame.make(opcode: 8, payload: [0x03, 0xE8], fin: false)),
            ]
            for (what, bytes) in cases {
                let raw = try expectClose(f, bystander, after: bytes, code: 1002, what)
                #expect(raw.closeReason == "invalid frame header", "\(what)")
                #expect(!raw.frames.contains { $0.opcode == 10 }, "\(what): answered with a pong")
            }
            // The reason is on record.
            let logged = f.server.trace.entries.filter { $0.kind == .close && $0.code == 1002 }
            #expect(logged.count == cases.count)
            #expect(logged.allSatisfy { $0.text?.contains("invalid frame header") == true })
            reportFigure(12, "\(cases.count) bad control frames, each closed with 1002 \"invalid frame header\", "
                         + "the reason in the trace; a 125-byte ping is answered")
            fine.connection.close()
            f.settle()
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row13_continuationWithoutStartAndInterleavedDataAreClosedWith1002() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let cases: [(String, [UInt8])] = [
                ("continuation without a start", ClientFrame.make(opcode: 0, payload: Array(requestText(2, "ping").utf8))),
                ("final empty continuation without a start", ClientFrame.make(opcode: 0)),
                ("text inside a fragmented text", ClientFrame.make(opcode: 1, payload: [0x7B], fin: false)
                    + ClientFrame.text(requestText(2, "ping"))),
                ("binary inside a fragmented text", ClientFrame.make(opcode: 1, payload: [0x7B], fin: false)
                    + ClientFrame.make(opcode: 2, payload: [1])),
                ("text inside a fragmented binary", ClientFrame.make(opcode: 2, payload: [1], fin: false)
                    + ClientFrame.make(opcode: 1, payload: [0x7B], fin: false)),
            ]
            for (what, bytes) in cases {
                let raw = try expectClose(f, bystander, after: bytes, code: 1002, what)
                #expect(raw.messages.count == 1, "\(what): a message was processed")
            }
            // Control frames between fragments are allowed and answered.
            let fine = try f.rawWebSocket(login: "carol", device: "fine")
            fine.write(ClientFrame.make(opcode: 1, payload: Array(#"{"id":5,"#.utf8), fin: false)
                       + ClientFrame.make(opcode: 9, payload: [7]) + ClientFrame.make(opcode: 0, payload: Array(#""op":"ping"}"#.utf8)))
            f.settle()
            #expect(fine.frames.contains { $0.opcode == 10 && $0.payload == [7] })
            #expect(fine.messages.last?.requestID == .integer(5))
            reportFigure(13, "\(cases.count) out-of-order data frames, each closed with 1002")
            fine.connection.close()
            f.settle()
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row14_hugeDeclaredLengthIsRefusedWithoutAllocating() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            var raw: RawConnection?
            let growth = try ProcessProbe.peakGrowth {
                // Only the header: 2^62 bytes announced, then silence.
                raw = try expectClose(f, bystander, after: ClientFrame.make(opcode: 1, declaredLength: 1 << 62),
                                      code: 1009, "2^62-byte text frame")
            }
            #expect(growth < 1 << 20, "peak RSS grew by \(growth) bytes")
            #expect(raw?.messages.count == 1)
            // The same for a binary frame and for the largest length the format allows.
            let binaryGrowth = try ProcessProbe.peakGrowth {
                try expectClose(f, bystander, after: ClientFrame.make(opcode: 2, declaredLength: (1 << 63) - 1),
                                code: 1009, "2^63-1-byte binary frame")
            }
            #expect(binaryGrowth < 1 << 20, "peak RSS grew by \(binaryGrowth) bytes")
            // A length with the most significant bit set is malformed (section 5.2).
            try expectClose(f, bystander, after: ClientFrame.make(opcode: 1, declaredLength: 1 << 63), code: 1002,
                            "2^63-byte frame")
            let measuredFromReset = ProcessProbe.resetPeakRSS()
            reportFigure(14, "2^62-byte header then silence: close 1009 at once, peak RSS +\(growth / 1024) KiB; "
                         + "2^63-1 binary: 1009, +\(binaryGrowth / 1024) KiB; 2^63: 1002 "
                         + "(peak \(measuredFromReset ? "reset before each measurement" : "not resettable: growth over the run's peak"))")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        /// A ping request padded with spaces to exactly `size` bytes of JSON.
        private static func paddedPing(id: Int, size: Int) -> [UInt8] {
            let core = Array(requestText(id, "ping").utf8)
            return [core[0]] + Array(repeating: 0x20, count: size - core.count) + core.dropFirst()
        }

        @Test func row15_messageAtTheSizeLimitIsProcessedAndOneByteMoreIs1009() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let limit = WebSocket.Configuration().maxMessageBytes
            #expect(limit == 65_536)
            let raw = try f.rawWebSocket(login: "bob", device: "limit")
            let exact = Self.paddedPing(id: 2, size: limit)
            raw.write(ClientFrame.make(opcode: 1, payload: exact))
            f.settle()
            #expect(raw.messages.last?.requestID == .integer(2))
            #expect(raw.messages.last?.resultObject?["pong"] == true)
            // Also when the limit is reached over several fragments.
            let split = Self.paddedPing(id: 3, size: limit)
            raw.write(ClientFrame.make(opcode: 1, payload: Array(split[..<40_000]), fin: false)
                      + ClientFrame.make(opcode: 0, payload: Array(split[40_000...])))
            f.settle()
            #expect(raw.messages.last?.requestID == .integer(3))
            #expect(!raw.isClosed)
            // One more byte: only the header is sent, and the close comes before any payload.
            f.sendAndAwaitClose(raw, ClientFrame.make(opcode: 1, declaredLength: UInt64(limit + 1)))
            #expect(raw.closeCode == 1009)
            #expect(bystander.events(about: "bob") == ["user.online", "user.offline"])
            // Over the limit across fragments: refused at the header of the fragment that crosses it.
            try expectClose(f, bystander, after: ClientFrame.make(opcode: 1, payload: Array(split[..<40_000]), fin: false)
                                + ClientFrame.make(opcode: 0, declaredLength: UInt64(limit - 40_000 + 1)),
                            code: 1009, "fragments summing to the limit + 1")
            reportFigure(15, "\(limit)-byte message (whole and in 2 fragments) answered; \(limit + 1) bytes: close 1009 "
                         + "on the header, before any payload")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row16_zeroByteFragmentFloodIsClosedAtTheCap() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let cap = WebSocket.Configuration().maxFragments
            let ping = Array(requestText(4, "ping").utf8)
            /// A ping request spread over `frames` frames, most of them empty.
            func fragmented(frames: Int, final: Bool) -> [UInt8] {
                var bytes = ClientFrame.make(opcode: 1, payload: [ping[0]], fin: false)
                for _ in 0..<(frames - 2) { bytes += ClientFrame.make(opcode: 0, fin: false) }
                return bytes + ClientFrame.make(opcode: 0, payload: Array(ping.dropFirst()), fin: !final ? false : true)
            }
            // At the cap, the message is processed.
            let raw = try f.rawWebSocket(login: "carol", device: "cap")
            raw.write(fragmented(frames: cap, final: true))
            f.settle()
            #expect(raw.messages.last?.requestID == .integer(4))
            #expect(!raw.isClosed)
            raw.connection.close()
            f.settle()
            // One frame more is refused, even when the message would complete in the same read.
            let over = try expectClose(f, bystander, after: fragmented(frames: cap + 1, final: true), code: 1008,
                                       "\(cap + 1) frames")
            #expect(over.messages.count == 1, "the over-long message was processed")
            // A flood that never ends: closed at the cap, memory bounded.
            let flood = 20_000
            var floodBytes = ClientFrame.make(opcode: 1, fin: false)
            for _ in 0..<flood { floodBytes += ClientFrame.make(opcode: 0, fin: false) }
            let growth = try ProcessProbe.peakGrowth {
                try expectClose(f, bystander, after: floodBytes, code: 1008, "\(flood) empty fragments")
            }
            #expect(growth < 1 << 20, "peak RSS grew by \(growth) bytes")
            reportFigure(16, "\(cap) frames processed; \(cap + 1) frames: close 1008 without processing; flood of \(flood) "
                         + "empty fragments (\(floodBytes.count) bytes): 1008, peak RSS +\(growth / 1024) KiB")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row17_invalidUTF8SplitAcrossFragmentsIsClosedWith1007AtOnce() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let prefix = Array(#"{"id":2,"op":"users.get","uid":""#.utf8)
            let cases: [(String, [UInt8])] = [
                // "€" is E2 82 AC; the second fragment continues it with a byte that is
                // not a continuation byte. No final fragment is ever sent.
                ("split sequence broken in the next fragment",
                 ClientFrame.make(opcode: 1, payload: prefix + [0xE2, 0x82], fin: false)
                    + ClientFrame.make(opcode: 0, payload: [0x28, 0x41], fin: false)),
                ("invalid byte at the start of a long frame whose rest never comes",
                 ClientFrame.make(opcode: 1, payload: [0x7B, 0xFF] + Array(repeating: 0x20, count: 10)).prefix(18)
                    .map { $0 }.withDeclaredLength(1_000)),
                ("overlong encoding", ClientFrame.make(opcode: 1, payload: prefix + [0xC0, 0xAF], fin: false)),
                ("UTF-16 surrogate", ClientFrame.make(opcode: 1, payload: prefix + [0xED, 0xA0, 0x80], fin: false)),
                ("message ends inside a sequence", ClientFrame.make(opcode: 1, payload: prefix + [0xE2], fin: false)
                    + ClientFrame.make(opcode: 0, payload: [0x82])),
                ("close reason not UTF-8", ClientFrame.close(1000, reason: [0xFF, 0xFE])),
            ]
            for (what, bytes) in cases {
                let raw = try expectClose(f, bystander, after: bytes, code: 1007, what)
                #expect(raw.messages.count == 1, "\(what): the message was processed")
            }
            // A valid sequence split across fragments is fine.
            let fine = try f.rawWebSocket(login: "carol", device: "fine")
            fine.write(ClientFrame.make(opcode: 1, payload: prefix + [0xE2], fin: false)
                       + ClientFrame.make(opcode: 0, payload: [0x82], fin: false)
                       + ClientFrame.make(opcode: 0, payload: [0xAC] + Array(#""}"#.utf8)))
            f.settle()
            #expect(fine.messages.last?.errorCode == "ERR_UID_NOT_FOUND")
            reportFigure(17, "\(cases.count) invalid UTF-8 inputs, each closed with 1007 as soon as the bad byte arrives "
                         + "(no final fragment needed); a valid split sequence is processed")
            fine.connection.close()
            f.settle()
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row18_closeFramesWithInvalidCodesAreAnsweredWith1002() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            var cases: [(String, [UInt8])] = [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65_535].map {
                ("code \($0)", ClientFrame.close(UInt16($0)))
            }
            cases.append(("1-byte payload", ClientFrame.make(opcode: 8, payload: [0x03])))
            for (what, bytes) in cases {
                try expectClose(f, bystander, after: bytes, code: 1002, what)
            }
            // Valid codes are echoed and the closing handshake completes: 1000-1015 but
            // the four reserved ones (1012-1014 registered with IANA after RFC 6455; wslay
            // alone refused them with 1002), and 3000-4999.
            let valid: [UInt16] = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]
            for code in valid {
                let raw = try f.rawWebSocket(login: "carol", device: "valid-\(code)")
                #expect(f.sendAndAwaitClose(raw, ClientFrame.close(code, reason: Array("bye".utf8))))
                #expect(raw.closeCode == code)
                #expect(f.server.trace.entries.last { $0.kind == .close }?.text == "closed: closing handshake complete")
            }
            // No code at all is valid too: the server answers with an empty close.
            let empty = try f.rawWebSocket(login: "carol", device: "empty")
            #expect(f.sendAndAwaitClose(empty, ClientFrame.close(nil)))
            #expect(empty.sawCloseFrame && empty.closeCode == nil)
            reportFigure(18, "\(cases.count) invalid close payloads, each answered with 1002; \(valid.count) valid codes echoed")
            #expect(bystander.events(about: "carol") == Array(repeating: ["user.online", "user.offline"], count: valid.count + 1).flatMap { $0 })
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }

        @Test func row19_aPeerThatIgnoresOurCloseIsCutOffAfterTheTimeout() throws {
            let f = try ServerFixture()
            let bystander = try Bystander(f)
            let closeTimeout = WebSocket.Configuration().closeTimeout
            // bob logs out; the server answers and sends close 1000. bob never answers the
            // close but keeps sending requests.
            let raw = try f.rawWebSocket(login: "bob", device: "stubborn")
            let t0 = f.now
            raw.write(ClientFrame.text(requestText(2, "logout")))
            f.settle()
            #expect(raw.messages.last?.requestID == .integer(2))
            #expect(raw.closeCode == 1000)
            #expect(bystander.events(about: "bob") == ["user.online", "user.offline"])
            for step in 1...4 {
                f.advance(seconds: 1)
                raw.write(ClientFrame.text(requestText(10 + step, "ping")))
                f.settle()
            }
            #expect(raw.messages.count == 2)  // login and logout replies: nothing after the close
            f.advance(to: t0.advanced(by: closeTimeout - 1))
            #expect(!raw.isClosed)
            #expect(f.server.openConnectionCount == 2)
            f.advance(milliseconds: 1)
            #expect(raw.isClosed)
            #expect(f.server.openConnectionCount == 1)
            #expect(f.server.trace.entries.last { $0.kind == .close }?.text == "closed: peer did not finish the closing handshake")
            // Kicked by another device and silent: the same deadline.
            let phone1 = try f.rawWebSocket(login: nil)
            phone1.write(ClientFrame.text(loginText(uid: "dave", device: "p1", platform: "mobile")))
            f.settle()
            let t1 = f.now
            let phone2 = try f.loggedIn("dave", device: "p2", platform: .mobile)
            #expect(phone1.closeCode == 4001)
            f.advance(to: t1.advanced(by: closeTimeout - 1))
            #expect(!phone1.isClosed)
            f.advance(milliseconds: 1)
            #expect(phone1.isClosed)
            #expect(!phone2.isClosed)
            // A peer that sends data right after its own close: the data is ignored and
            // the server ends the stream at once.
            let hasty = try f.rawWebSocket(login: "carol", device: "hasty")
            #expect(f.sendAndAwaitClose(hasty, ClientFrame.close(1000) + ClientFrame.text(requestText(9, "ping"))))
            #expect(hasty.closeCode == 1000)
            #expect(hasty.messages.count == 1)  // the login reply only
            #expect(bystander.events(about: "dave") == ["user.online"])
            #expect(bystander.events(about: "bob") == ["user.online", "user.offline"])
            #expect(bystander.events(about: "carol") == ["user.online", "user.offline"])
            reportFigure(19, "TCP closed \(closeTimeout) ms of clock time after the unanswered close (open at \(closeTimeout - 1) ms), "
                         + "4 requests sent meanwhile ignored; data after the peer's own close ignored")
            bystander.expectUnaffected()
            #expect(f.shutdown() == 0)
        }
    }
}

extension Array where Element == UInt8 {
    /// A 7-bit-length frame rewritten to declare a 16-bit `length` instead, keeping the
    /// bytes that follow: the rest of the payload is then never sent.
    func withDeclaredLength(_ length: Int) -> [UInt8] {
        precondition(self[1] & 0x7F < 126 && length <= 0xFFFF)
        return [self[0], (self[1] & 0x80) | 126, UInt8(length >> 8), UInt8(length & 0xFF)] + self[2...]
    }
}
