import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// Server misbehaviour on demand (docs/PROTOCOL.md, 12.7 and 12.7a), each effect
/// measured over real sockets on the virtual clock.
@Suite("Misbehaviour")
struct MisbehaviourTests {
    /// Prints a measured figure; `make test` output keeps them.
    static func figure(_ text: String) { print("misbehaviour: \(text)") }

    /// Moves the clock to the next timer (a held frame) until `done`, at most `limit` times.
    static func advanceUntil(_ f: ServerFixture, limit: Int = 100, _ done: () -> Bool) {
        var steps = 0
        while !done(), steps < limit, let next = f.loop.clock.nextDeadline {
            f.advance(to: next)
            steps += 1
        }
    }

    /// Ping round trips of alice under an outbound link, in milliseconds of clock time.
    static func pingLatencies(link: String, count: Int) throws -> [Int64] {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: link).status == 200)
        var latencies: [Int64] = []
        for _ in 0..<count {
            let sent = f.now
            let id = alice.send("ping")
            f.settle()
            advanceUntil(f) { alice.reply(to: id) != nil }
            #expect(alice.reply(to: id) != nil)
            latencies.append(f.now.milliseconds - sent.milliseconds)
        }
        return latencies
    }

    /// A server with alice logged in over a raw WebSocket behind an outbound link.
    static func rawAlice(outbound link: String, clock: Clock.Mode = .virtual(start: .virtualEpoch))
        throws -> (ServerFixture, RawConnection) {
        let f = try ServerFixture(clock: clock)
        let raw = try f.rawWebSocket(login: "alice")
        let body = #"{"fault":"link","uid":"alice","direction":"out",\#(link)}"#
        #expect(try f.control("POST", "/control/faults", body: body).status == 200)
        return (f, raw)
    }

    /// Pushes a text frame of `count` copies of `character` to alice.
    static func push(_ f: ServerFixture, _ character: Character, count: Int) throws -> String {
        let text = String(repeating: character, count: count)
        #expect(try f.control("POST", "/control/push", body: #"{"uid":"alice","frame":"\#(text)"}"#).status == 200)
        return text
    }

    @Test func delayWithJitterSpreadsFramesOverTheWindowAndRepeatsForASeed() throws {
        let link = #"{"fault":"link","uid":"alice","direction":"out","delayMs":200,"jitterMs":50,"seed":7}"#
        let latencies = try Self.pingLatencies(link: link, count: 200)
        let mean = Double(latencies.reduce(0, +)) / Double(latencies.count)
        let deviation = (latencies.map { pow(Double($0) - mean, 2) }.reduce(0, +) / Double(latencies.count)).squareRoot()
        Self.figure("delay 200 ms jitter 50 ms seed 7, 200 pongs: min \(latencies.min()!) ms, max \(latencies.max()!) ms, "
                    + "mean \(String(format: "%.1f", mean)) ms, sd \(String(format: "%.1f", deviation)) ms, "
                    + "\(Set(latencies).count) distinct values")
        #expect(latencies.allSatisfy { (150...250).contains($0) })
        #expect(Set(latencies).count > 20, "jitter varies the delay")
        #expect(abs(mean - 200) < 10)
        #expect(try Self.pingLatencies(link: link, count: 200) == latencies, "the same seed gives the same delays")
        let other = link.replacingOccurrences(of: #""seed":7"#, with: #""seed":8"#)
        #expect(try Self.pingLatencies(link: other, count: 200) != latencies)
        #expect(try Self.pingLatencies(link: #"{"fault":"link","uid":"bob","delayMs":200}"#, count: 3) == [0, 0, 0],
                "another user's link leaves alice alone")
    }

    @Test func delayWithJitterHoldsOnTheSystemClock() throws {
        let f = try ServerFixture(clock: .system)
        let alice = try f.loggedIn("alice", device: "a")
        let link = #"{"fault":"link","uid":"alice","direction":"out","delayMs":200,"jitterMs":50,"seed":7}"#
        #expect(try f.control("POST", "/control/faults", body: link).status == 200)
        var latencies: [Int] = []
        for _ in 0..<12 {
            let sent = Date()
            let id = alice.send("ping")
            #expect(f.loop.run(timeout: 5) { alice.reply(to: id) != nil })
            latencies.append(Int((Date().timeIntervalSince(sent) * 1000).rounded()))
        }
        Self.figure("delay 200 ms jitter 50 ms seed 7 on the system clock, 12 pongs: \(latencies) ms of wall time")
        // The same seed draws the same delays as on the virtual clock. Each pong waits at
        // least its delay (1 ms for the loop's cached time); it is late only by the loop's
        // own lateness, which a loaded machine stretches without limit, so the upper bound
        // only catches a frame held far too long (a timer that does not fire, a wrong unit).
        let drawn = try Self.pingLatencies(link: link, count: latencies.count)
        for (wall, delay) in zip(latencies, drawn) {
            #expect(wall >= Int(delay) - 1 && wall < Int(delay) + 1_000, "\(wall) ms of wall time for a \(delay) ms delay")
        }
    }

    @Test func inboundDelayShowsInThePongsServerTime() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let t0 = f.now
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"link","uid":"alice","direction":"in","delayMs":300}"#).status == 200)
        let first = alice.send("ping")
        let second = alice.send("ping")
        f.settle()
        f.advance(milliseconds: 299)
        #expect(alice.reply(to: first) == nil, "the server has not read the ping yet")
        f.advance(milliseconds: 1)
        let times = [first, second].map { alice.reply(to: $0)?.resultObject?["serverTime"]?.doubleValue }
        #expect(times == [t0.advanced(by: 300).seconds, t0.advanced(by: 300).seconds], "read 300 ms late, in order")
    }

    @Test func bandwidthLimitSpacesFramesByTheirSize() throws {
        let (f, raw) = try Self.rawAlice(outbound: #""bytesPerSecond":20000"#)
        let framesBefore = raw.frames.count
        var text = ""
        for _ in 0..<6 { text = try Self.push(f, "x", count: 10_000) }
        let start = f.now
        var arrivals: [Int64] = []
        while arrivals.count < 6, f.now.milliseconds - start.milliseconds < 10_000 {
            f.advance(milliseconds: 10)
            let arrived = raw.frames.count - framesBefore
            while arrivals.count < arrived { arrivals.append(f.now.milliseconds - start.milliseconds) }
        }
        let rate = 60_000 / (Double(arrivals.last ?? 1) / 1000)
        Self.figure("bandwidth 20000 B/s: six 10000-byte frames arrived at \(arrivals) ms of clock time = \(Int(rate)) B/s")
        #expect(arrivals == [500, 1_000, 1_500, 2_000, 2_500, 3_000])
        #expect(abs(rate - 20_000) / 20_000 < 0.02)
        #expect(raw.frames.last?.text == text)
    }

    @Test func inboundBandwidthSpacesWhatTheServerReads() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let t0 = f.now
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"link","uid":"alice","direction":"in","bytesPerSecond":100}"#).status == 200)
        let pings = (0..<3).map { _ in alice.send("ping") }  // {"id":N,"op":"ping"}: 20 bytes each
        f.settle()
        MisbehaviourTests.advanceUntil(f) { pings.allSatisfy { alice.reply(to: $0) != nil } }
        let read = pings.map { alice.reply(to: $0)?.resultObject?["serverTime"]?.doubleValue ?? 0 }
        Self.figure("inbound 100 B/s: three 20-byte pings read at \(read.map { Int((($0 - t0.seconds) * 1000).rounded()) }) ms")
        #expect(read == [200, 400, 600].map { t0.advanced(by: $0).seconds })
    }

    @Test func bandwidthLimitHoldsOnTheSystemClock() throws {
        let (f, raw) = try Self.rawAlice(outbound: #""bytesPerSecond":100000"#, clock: .system)
        let framesBefore = raw.frames.count
        let started = Date()
        for _ in 0..<10 { _ = try Self.push(f, "z", count: 10_000) }
        #expect(f.loop.run(timeout: 10) { raw.frames.count - framesBefore == 10 })
        let seconds = Date().timeIntervalSince(started)
        let rate = 100_000 / seconds
        Self.figure("bandwidth 100000 B/s on the system clock: 100000 bytes in \(String(format: "%.3f", seconds)) s of wall time = \(Int(rate)) B/s")
        #expect(rate <= 100_000 * 1.02, "never faster than the limit")
        // Slower only by the loop's lateness, which a loaded machine stretches (the exact
        // spacing is checked on the virtual clock above), so this only catches frames held
        // far longer than their size says.
        #expect(seconds < 3)
    }

    @Test func slicingCutsEachFrameIntoSmallWrites() throws {
        let (f, raw) = try Self.rawAlice(outbound: #""sliceBytes":16"#)
        let readsBefore = raw.readSizes.count
        let text = try Self.push(f, "y", count: 300)
        let sizes = Array(raw.readSizes[readsBefore...])
        Self.figure("slicing 16 B: a 304-byte frame arrived in \(sizes.count) reads of \(Set(sizes).sorted()) bytes")
        #expect(sizes.reduce(0, +) == 304)
        #expect(sizes.max() == 16 && sizes.count == 19)
        #expect(raw.frames.last?.text == text)
        #expect(raw.messages.isEmpty == false, "the login reply was not sliced")
    }

    /// How many of `count` pings alice gets answered under a link, and the trace's drops.
    static func answered(link: String, count: Int) throws -> (ids: [Int64], traced: Int) {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: link).status == 200)
        let sent = (0..<count).map { _ in alice.send("ping") }
        f.settle()
        let ids = sent.filter { alice.reply(to: $0) != nil }.compactMap { if case .integer(let n) = $0 { n } else { nil } }
        let traced = f.server.trace.entries.filter { $0.text?.hasPrefix("link ") == true && $0.text?.hasSuffix("frame dropped") == true }.count
        return (ids, traced)
    }

    @Test func dropPercentDropsASeededShareOfFramesInEitherDirection() throws {
        for direction in ["out", "in"] {
            let link = #"{"fault":"link","uid":"alice","direction":"\#(direction)","dropPercent":30,"seed":5}"#
            let (ids, traced) = try Self.answered(link: link, count: 2_000)
            let rate = 1 - Double(ids.count) / 2_000
            Self.figure("drop 30% \(direction) seed 5: \(2_000 - ids.count) of 2000 pings lost = \(String(format: "%.1f", rate * 100))%")
            #expect((0.27...0.33).contains(rate))
            #expect(traced == 2_000 - ids.count, "every drop is in the trace")
            #expect(try Self.answered(link: link, count: 2_000).ids == ids, "the same seed drops the same frames")
        }
    }

    @Test func scriptedRepliesAnswerNTimesThenTheServerAgain() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let script = #"{"fault":"reply","op":"ping","error":{"errorCode":"ERR_INTERNAL","errorDescription":"scripted"},"delayMs":100,"times":2}"#
        #expect(try f.control("POST", "/control/faults", body: script).status == 200)
        for _ in 0..<2 {
            let id = alice.send("ping")
            f.settle()
            #expect(alice.reply(to: id) == nil, "the scripted reply waits 100 ms")
            f.advance(milliseconds: 100)
            guard case .error(_, let error)? = alice.reply(to: id) else {
                Issue.record("no scripted error: \(String(describing: alice.reply(to: id)))")
                continue
            }
            #expect(error.code == "ERR_INTERNAL")
        }
        #expect(alice.request("ping")?.resultObject?["pong"] == true, "after two uses the server answers again")
        #expect(try f.control("GET", "/control/faults").json?["replies"] == [])

        let byField = #"{"fault":"reply","op":"users.get","match":{"uid":"bob"},"result":{"user":null}}"#
        #expect(try f.control("POST", "/control/faults", body: byField).status == 200)
        #expect(alice.request("users.get", ["uid": "bob"])?.resultObject?["user"] == .null)
        #expect(alice.request("users.get", ["uid": "bob"])?.resultObject?["user"] == .null, "no times: every time")
        #expect(alice.request("users.get", ["uid": "carol"])?.resultObject?["user"]?["uid"] == "carol", "other fields: the server")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"reply","op":"users.get","enabled":false}"#).status == 200)
        #expect(alice.request("users.get", ["uid": "bob"])?.resultObject?["user"]?["uid"] == "bob")
    }

    @Test func pushSendsEventsFramesBytesAndCloses() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        let event = #"{"event":"user.online","user":{"uid":"zed","name":"Zed","status":"online"}}"#
        let reply = try f.control("POST", "/control/push", body: #"{"uid":"alice","event":\#(event)}"#)
        #expect(reply.json == ["ok": true, "connections": ["c1"]])
        // Sent as it is (12.7a): a well-formed user.online, so it arrives as zed's presence,
        // with no field added; the control reply settles only once alice has read it.
        #expect(alice.unparsed.isEmpty)
        #expect(alice.presence.map(\.event) == ["user.online"])
        #expect(alice.presence.first?.user.asReceived.value == ["uid": "zed", "name": "Zed", "status": "online"])
        #expect(try f.control("POST", "/control/push", body: #"{"connection":"c1","frame":"not json"}"#).status == 200)
        #expect(alice.unparsed.last == "not json")

        let bob = try f.loggedIn("bob", device: "b")
        #expect(try f.control("POST", "/control/push", body: #"{"deviceId":"b","close":{"code":4321,"reason":"pushed"}}"#).status == 200)
        #expect(bob.closeInfo?.received == 4321)

        let carol = try f.loggedIn("carol", device: "c")
        #expect(try f.control("POST", "/control/push", body: #"{"uid":"carol","close":{"frame":false}}"#).status == 200)
        #expect(f.loop.run(timeout: 5) { carol.isClosed })
        #expect(carol.closeInfo?.received == nil && carol.closeInfo?.abnormal == "peer closed the stream",
                "the stream ended with no close frame: \(String(describing: carol.closeInfo))")

        let dave = try f.loggedIn("dave", device: "d")
        // A frame with reserved opcode 0xF: the client must fail the connection with 1002.
        #expect(try f.control("POST", "/control/push", body: #"{"uid":"dave","bytes":"8f 00"}"#).status == 200)
        #expect(f.loop.run(timeout: 5) { dave.isClosed })
        #expect(dave.closeInfo?.sent == 1002)
        #expect(!alice.isClosed && alice.request("ping") != nil, "everyone else is still served")

        let pushes = f.server.trace.entries.filter { $0.kind == .control && $0.text?.hasPrefix("push") == true }
        #expect(pushes.map { $0.text ?? "" } == ["push event", "push frame", "push close", "push close", "push bytes"])
        #expect(pushes[2].frame?["close"] == ["frame": true, "code": 4321, "reason": "pushed"], "defaults written out")
    }

    @Test func aLinkThatWithholdsCloseFramesEndsTheServersClosesWithoutOne() throws {
        let f = try ServerFixture()
        let first = try f.loggedIn("bob", device: "b1", platform: .mobile)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"link","uid":"bob","direction":"out","closeFrame":false}"#).status == 200)
        _ = try f.loggedIn("bob", device: "b2", platform: .mobile)
        #expect(f.loop.run(timeout: 5) { first.isClosed })
        #expect(first.events.count == 1, "the device.kicked event still arrives")
        #expect(first.closeInfo?.received == nil && first.closeInfo?.abnormal == "peer closed the stream",
                "no close frame: \(String(describing: first.closeInfo))")
        #expect(f.server.trace.entries.contains { $0.text == "link out: close frame 4001 withheld" })
        #expect(try f.control("DELETE", "/control/faults").status == 200)
        let third = try f.loggedIn("bob", device: "b3", platform: .mobile)
        _ = third
        #expect(f.loop.run(timeout: 5) { f.server.sessionCount == 1 })
    }

    @Test func stallAcceptsTheUpgradeThenNeverReadsOrAnswers() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"stall"}"#).status == 200)
        let stuck = try f.connect()
        _ = stuck.login(uid: "bob", device: "b")
        stuck.socket.sendPing()
        #expect(try f.control("POST", "/control/push", body: #"{"connection":"c2","frame":"hello"}"#).status == 200)
        f.advance(seconds: 20)
        #expect(stuck.messages.isEmpty && stuck.unparsed.isEmpty && !stuck.isClosed,
                "no reply, no push, no close at the 10 s login deadline")
        let port = stuck.socket.connection.localAddress?.port
        let counts = f.server.sessionCounts.first { $0.port == port }
        #expect(counts?.sent == 0 && counts?.received == 1, "settling sees what really crossed: \(String(describing: counts))")
        #expect(f.server.trace.entries.contains { $0.text == "stall: inbound frame ignored" && $0.frame?["op"] == "login" })
        #expect(try f.control("GET", "/control/presence").json?["online"] == ["alice"])
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"stall","enabled":false}"#).status == 200)
        #expect(try f.loggedIn("carol", device: "c").isClosed == false, "new connections are served again")
        #expect(alice.request("ping") != nil)
        #expect(try f.control("POST", "/control/reset").status == 200)
        #expect(f.loop.run(timeout: 5) { stuck.isClosed }, "a reset ends the stalled connection")
    }

    @Test func badMisbehaviourRequestsAre400Or404AndChangeNothing() throws {
        let f = try ServerFixture()
        let alice = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"link","uid":"alice","delayMs":100,"jitterMs":10}"#).status == 200)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"reply","op":"ping","result":{"pong":true},"times":3}"#).status == 200)
        let before = try f.control("GET", "/control/faults").json
        let traceBefore = f.server.trace.entries.count
        let cases: [(String, String, Int, String)] = [
            ("/control/faults", #"{"fault":"link","uid":"alice","delayMs":100,"speed":9}"#, 400, "unknown field 'speed' for fault link"),
            ("/control/faults", #"{"fault":"link","uid":"alice"}"#, 400, "link needs at least one of"),
            ("/control/faults", #"{"fault":"link","delayMs":-1}"#, 400, "'delayMs' must be an integer from 0 to 3600000"),
            ("/control/faults", #"{"fault":"link","delayMs":10,"jitterMs":20}"#, 400, "'jitterMs' (20) must not exceed 'delayMs' (10)"),
            ("/control/faults", #"{"fault":"link","dropPercent":101}"#, 400, "'dropPercent' must be a number from 0 to 100"),
            ("/control/faults", #"{"fault":"link","bytesPerSecond":0}"#, 400, "'bytesPerSecond' must be an integer from 1"),
            ("/control/faults", #"{"fault":"link","sliceBytes":8}"#, 400, "'sliceBytes' cuts the server's writes"),
            ("/control/faults", #"{"fault":"link","direction":"up","delayMs":1}"#, 400, "'direction' is in, out or both"),
            ("/control/faults", #"{"fault":"link","delayMs":1,"seed":"x"}"#, 400, "'seed' must be an integer"),
            ("/control/faults", #"{"fault":"link","closeFrame":false}"#, 400, "'closeFrame' is about the server's closes"),
            ("/control/faults", #"{"fault":"reply","result":{}}"#, 400, "reply needs 'op'"),
            ("/control/faults", #"{"fault":"reply","op":"ping"}"#, 400, "exactly one of 'result' and 'error'"),
            ("/control/faults", #"{"fault":"reply","op":"ping","error":{"code":"X"}}"#, 400, "'error' needs 'errorCode'"),
            ("/control/faults", #"{"fault":"reply","op":"ping","result":{},"times":0}"#, 400, "'times' must be an integer from 1"),
            ("/control/faults", #"{"fault":"stall","uid":"alice"}"#, 400, "stall applies to every new connection"),
            ("/control/faults", #"{"fault":"stall","enabled":"yes"}"#, 400, "'enabled' must be true or false"),
            ("/control/faults", #"{"fault":"link","frames":{"reply":"users.get"}}"#, 400, "link with 'frames' needs at least one of"),
            ("/control/faults", #"{"fault":"link","frames":{"reply":"users.get","event":"x"},"hold":true}"#, 400, "'frames' takes one of"),
            ("/control/faults", #"{"fault":"link","frames":{"kind":"x"},"hold":true}"#, 400, "'frames' takes one of"),
            ("/control/faults", #"{"fault":"link","frames":{"reply":""},"hold":true}"#, 400, "'frames' takes one of"),
            ("/control/faults", #"{"fault":"link","frames":{"op":"ping"},"direction":"out","hold":true}"#, 400, "needs \"direction\": \"in\""),
            ("/control/faults", #"{"fault":"link","frames":{"event":"user.online"},"sliceBytes":4}"#, 400, "'sliceBytes' shapes a whole link"),
            ("/control/faults", #"{"fault":"link","frames":{"event":"user.online"},"hold":"yes"}"#, 400, "'hold' must be true or false"),
            ("/control/faults", #"{"fault":"link","frames":{"event":"user.online"},"duplicate":true,"times":0}"#, 400, "'times' must be an integer from 1"),
            ("/control/faults", #"{"fault":"link","delayMs":5,"hold":true}"#, 400, "'hold' applies to chosen frames: it needs 'frames'"),
            ("/control/faults", #"{"fault":"upgrade"}"#, 400, "upgrade needs exactly one of 'status'"),
            ("/control/faults", #"{"fault":"upgrade","status":200}"#, 400, "'status' must be an integer from 400 to 599"),
            ("/control/faults", #"{"fault":"upgrade","status":503,"answer":"never"}"#, 400, "upgrade needs exactly one of"),
            ("/control/faults", #"{"fault":"upgrade","answer":"later"}"#, 400, "'answer' is \"never\""),
            ("/control/faults", #"{"fault":"upgrade","answer":"reset","retryAfter":3}"#, 400, "'retryAfter' goes with 'status'"),
            ("/control/faults", #"{"fault":"upgrade","status":429,"retryAfter":-1}"#, 400, "'retryAfter' must be an integer from 0 to 86400"),
            ("/control/faults", #"{"fault":"upgrade","status":429,"body":7}"#, 400, "'body' must be a string"),
            ("/control/faults", #"{"fault":"upgrade","status":429,"attempt":0}"#, 400, "'attempt' must be an integer from 1"),
            ("/control/faults", #"{"fault":"upgrade","status":429,"sharePercent":150}"#, 400, "'sharePercent' must be a number from 0 to 100"),
            ("/control/faults", #"{"fault":"upgrade","status":429,"attempt":2,"sharePercent":5}"#, 400, "'attempt' or 'sharePercent', not both"),
            ("/control/faults", #"{"fault":"upgrade","uid":"alice","status":429}"#, 400, "'status' answers the HTTP upgrade, but with 'uid' or 'deviceId'"),
            ("/control/faults", #"{"fault":"upgrade","deviceId":"","answer":"reset"}"#, 400, "'deviceId' must be a non-empty string"),
            ("/control/faults", #"{"fault":"latency"}"#, 400, "latency needs 'ms', the delay each way, an integer from 1 to 60000"),
            ("/control/faults", #"{"fault":"latency","ms":0}"#, 400, "'ms' must be an integer from 1 to 60000, not 0"),
            ("/control/faults", #"{"fault":"latency","ms":"50"}"#, 400, "latency needs 'ms', the delay each way, an integer"),
            ("/control/faults", #"{"fault":"latency","ms":50,"jitterMs":5}"#, 400, "unknown field 'jitterMs' for fault latency"),
            ("/control/faults", #"{"fault":"latency","uid":7,"ms":50}"#, 400, "'uid' must be a non-empty string"),
            ("/control/faults", #"{"fault":"slowClose"}"#, 400, "slowClose needs 'answerMs' (the peer's close answered late) or 'holdMs'"),
            ("/control/faults", #"{"fault":"slowClose","holdMs":0,"answerMs":0}"#, 400, "slowClose needs 'answerMs'"),
            ("/control/faults", #"{"fault":"slowClose","holdMs":-1}"#, 400, "'holdMs' must be an integer from 0 to 600000, not -1"),
            ("/control/faults", #"{"fault":"slowClose","answerMs":true}"#, 400, "'answerMs' must be an integer from 0 to 600000"),
            ("/control/faults", #"{"fault":"slowClose","holdMs":5,"afterMs":3}"#, 400, "unknown field 'afterMs' for fault slowClose"),
            ("/control/faults", #"{"fault":"silence","newConnections":"later"}"#, 400, "'newConnections' is \"hang\""),
            ("/control/faults", #"{"fault":"silence","newConnections":true}"#, 400, "'newConnections' is \"hang\""),
            ("/control/faults", #"{"fault":"silence","connection":"c1","uid":"alice"}"#, 400, "'connection' or a selector"),
            ("/control/faults", #"{"fault":"silence","connection":""}"#, 400, "'connection' must be a non-empty string"),
            ("/control/faults", #"{"fault":"silence","uid":"alice","after":3}"#, 400, "unknown field 'after' for fault silence"),
            ("/control/faults", #"{"fault":"silence","connection":"c99"}"#, 404, "no connection 'c99'"),
            ("/control/push", "{not json", 400, "not valid JSON"),
            ("/control/push", #"{"uid":"alice"}"#, 400, "exactly one of 'event', 'frame', 'bytes' and 'close'"),
            ("/control/push", #"{"uid":"alice","frame":"a","bytes":"00"}"#, 400, "exactly one of"),
            ("/control/push", #"{"frame":"a"}"#, 400, "push needs 'connection', 'uid' or 'deviceId'"),
            ("/control/push", #"{"uid":"ghost","frame":"a"}"#, 404, #"no logged-in connection matches {"uid":"ghost"}"#),
            ("/control/push", #"{"connection":"c99","frame":"a"}"#, 404, "no connection 'c99'"),
            ("/control/push", #"{"uid":"alice","colour":"red","frame":"a"}"#, 400, "unknown field 'colour' for push"),
            ("/control/push", #"{"uid":"alice","event":{"user":{}}}"#, 400, "'event' must be an event object"),
            ("/control/push", #"{"uid":"alice","bytes":"8g"}"#, 400, "'bytes' must be hex digits"),
            ("/control/push", #"{"uid":"alice","close":{"code":1005}}"#, 400, "'close.code' must be an integer from 1000 to 4999"),
            ("/control/push", #"{"uid":"alice","close":{"frame":false,"code":4000}}"#, 400, "carries no 'code'"),
        ]
        for (path, body, status, hint) in cases {
            let reply = try f.control("POST", path, body: body)
            let message = reply.json?["error"]?.stringValue ?? ""
            #expect(reply.status == status, "\(path) \(body): \(message)")
            #expect(message.contains(hint), "\(path) \(body): \(message)")
        }
        #expect(try f.control("GET", "/control/faults").json == before)
        #expect(f.server.trace.entries.count == traceBefore)
        #expect(!alice.isClosed)
    }

    @Test func theTraceCarriesEveryParameterWithItsDefaults() throws {
        let f = try ServerFixture()
        _ = try f.loggedIn("alice", device: "a")
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"link","uid":"alice","delayMs":40}"#).status == 200)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"stall"}"#).status == 200)
        #expect(try f.control("POST", "/control/faults", body: #"{"fault":"silence","uid":"alice"}"#).status == 200)
        let controls = f.server.trace.entries.filter { $0.kind == .control && $0.text?.hasPrefix("fault") == true }
        #expect(controls.map { $0.frame } == [
            ["fault": "link", "uid": "alice", "delayMs": 40, "direction": "both", "seed": 1],
            ["fault": "stall"],
            ["fault": "silence", "uid": "alice", "newConnections": "hang"],
        ])
        #expect(controls.map { $0.text } == ["fault link on", "fault stall on", "fault silence on"])
    }
}

@Suite("LinkShape")
struct LinkShapeTests {
    @Test func framesKeepTheirOrderAndStayInTheWindow() {
        var shape = LinkShape(delayMs: 100, jitterMs: 100, seed: 3)
        var previous: Instant?
        let start = Instant.virtualEpoch
        for _ in 0..<1_000 {
            let leaves = shape.departure(of: 0, at: start, after: previous)!
            #expect(leaves >= start && leaves <= start.advanced(by: 200))
            #expect(previous.map { leaves >= $0 } ?? true)
            previous = leaves
        }
    }

    @Test func inboundBytesTakeTheirTimeAtTheRate() {
        var shape = LinkShape(bytesPerSecond: 1_000)
        let start = Instant.virtualEpoch
        let first = shape.departure(of: 500, at: start, after: nil)!
        let second = shape.departure(of: 500, at: start, after: first)!
        #expect(first == start.advanced(by: 500) && second == start.advanced(by: 1_000))
    }

    @Test func closesAreNeverDropped() {
        var shape = LinkShape(dropPercent: 100)
        #expect(shape.departure(of: 0, at: .virtualEpoch, after: nil) == nil)
        #expect(shape.departure(of: 0, at: .virtualEpoch, after: nil, droppable: false) == .virtualEpoch)
    }
}
