import ChatProtocol
import EventLoop
import Foundation
@testable import MockChatServer
import MockChatTestSupport
import Testing
import WireKit

/// The web console: the page and its routes follow the control API's access rules plus
/// the per-process token, a viewer costs bounded memory, and the routes it adds to the
/// control API (kick, presence with subscriptions) work as documented.
@Suite("Web console")
struct ConsoleTests {
    func fixture(access: ControlAccess = ControlAccess(), console: Bool = true) throws -> ServerFixture {
        try ServerFixture(access: access, server: { $0.console = console })
    }

    func http(_ f: ServerFixture, _ target: String, method: String = "GET", host: String? = nil,
              headers: [String] = [], body: String = "") throws -> HTTPReply {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? f.server.address.description)\r\n"
        for header in headers { text += header + "\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        return try f.rawHTTP(text)
    }

    @Test func thePageCarriesTheTokenUnderTheControlRules() throws {
        let f = try fixture()
        let token = try #require(f.server.consoleToken)
        let page = try http(f, "/console")
        #expect(page.status == 200)
        #expect(page.text.contains(#"<meta name="console-token" content="\#(token)">"#))
        #expect(page.text.contains("MockChat console") && !page.text.contains("{{"))
        #expect(page.headerValues("Content-Security-Policy").first?.contains("frame-ancestors 'none'") == true)
        // A rebinding name, a foreign page: refused, and the token is not in the answer.
        for refused in [try http(f, "/console", host: "attacker.test"),
                        try http(f, "/console", headers: ["Origin: http://attacker.test"])] {
            #expect(refused.status == 403)
            #expect(!refused.text.contains(token))
        }
    }

    @Test func theCompiledPageEqualsTheFilesOnDisk() throws {
        for (name, text) in [("html", EmbeddedConsole.html), ("css", EmbeddedConsole.css), ("js", EmbeddedConsole.js)] {
            let data = try #require(FileManager.default.contents(atPath: PackagePaths.path("Console/console.\(name)")))
            #expect(text + "\n" == String(decoding: data, as: UTF8.self), "Console/console.\(name) differs from the built-in copy")
        }
    }

    @Test func theControlTokenMayComeInTheAddress() throws {
        let f = try fixture(access: ControlAccess(token: "s3cret"))
        #expect(try http(f, "/console").status == 401)
        #expect(try http(f, "/console?token=wrong").status == 401)
        #expect(try http(f, "/console?token=s3cret").status == 200)
        let stream = try http(f, "/control/console/events?token=s3cret",
                              headers: ["X-Console-Token: \(try #require(f.server.consoleToken))"])
        // Only the page's address carries the token; a console route needs the header.
        #expect(stream.status == 401)
    }

    @Test func consoleRoutesNeedTheConsoleToken() throws {
        let f = try fixture()
        let token = try #require(f.server.consoleToken)
        for headers in [[], ["X-Console-Token: guess"]] {
            let reply = try http(f, "/control/console/events", headers: headers)
            #expect(reply.status == 403)
            #expect(reply.text.contains("X-Console-Token"))
            #expect(try http(f, "/control/console/scenario", method: "POST", headers: headers + ["Content-Type: application/json"],
                             body: "{}").status == 403)
        }
        // The token does not lift the control API's own rules.
        #expect(try http(f, "/control/console/events", headers: ["X-Console-Token: \(token)",
                                                                 "Origin: http://attacker.test"]).status == 403)
        #expect(try http(f, "/control/console/scenario", method: "POST", headers: ["X-Console-Token: \(token)", "Content-Type: text/plain"],
                         body: "{}").status == 415)
    }

    @Test func withoutTheConsoleNothingIsServed() throws {
        let f = try fixture(console: false)
        #expect(f.server.consoleToken == nil)
        #expect(try http(f, "/console").status == 404)
        #expect(try http(f, "/control/console/events").status == 404)
    }

    @Test func theStreamSendsEntriesAsTheyAreKept() throws {
        let f = try fixture()
        _ = try f.control("POST", "/control/clock/advance", body: #"{"ms":5}"#)
        let stream = try ConsoleStreamReading(f, since: 0)
        let alice = try f.loggedIn("alice", device: "alice-laptop")
        f.loop.run(timeout: 5) { stream.lines.contains { $0["frame"]?["op"]?.stringValue == "login" } }
        let received = stream.lines
        #expect(received.first?["hello"]?["lastSeq"]?.intValue == 1)
        #expect(received.dropFirst().first?["text"]?.stringValue == "clock advanced 5 ms, 0 timers fired")
        let sequences = received.compactMap { $0["seq"]?.intValue }
        #expect(sequences == Array(1...Int64(sequences.count)))
        #expect(f.server.console?.streams.count == 1)
        stream.raw.connection.close()
        f.loop.run(timeout: 5) { f.server.console?.streams.count == 0 }
        #expect(f.server.console?.streams.count == 0)
        #expect(f.server.trace.onKeep == nil)
        _ = alice
    }

    @Test func aViewerThatDoesNotReadHoldsBoundedMemoryAndIsToldWhatItMissed() throws {
        let f = try fixture()
        let reading = try ConsoleStreamReading(f)
        let raw = reading.raw
        f.loop.run(timeout: 5) { !raw.received.isEmpty }
        raw.connection.pauseReading()
        let stream = try #require(f.server.console?.streams.all.first)
        var largestQueue = 0
        var total = 0
        let queueFull = { stream.connection.queuedWriteBytes >= ConsoleStream.writeBound }
        let tickArmed = { f.server.console?.streams.isTickArmed ?? false }
        /// Records `count` entries, then runs the loop until the stream has taken them all
        /// (sent or skipped, at its next tick) or, its queue at the bound, a tick has run.
        func record(_ count: Int) {
            for _ in 0..<count {
                total += 1
                f.server.trace.record(.control, time: f.now, text: "filler entry number \(total) of the test")
            }
            f.loop.run(timeout: 5) { stream.sent >= f.server.trace.lastSequence || (queueFull() && !tickArmed()) }
            largestQueue = max(largestQueue, stream.connection.queuedWriteBytes)
        }
        // Until the socket's buffers and the queue are full (the stream then writes no
        // more); each round stays under the lag bound, so nothing is skipped yet...
        for _ in 0..<300 where !queueFull() { record(ConsoleStream.lagBound / 2) }
        #expect(queueFull(), "the stream's queue never reached its bound")
        // ...then more than the lag bound on top.
        for _ in 0...(ConsoleStream.lagBound / 1000) { record(1000) }
        // The socket's queue never held much more than the bound and one batch of entries.
        #expect(largestQueue < ConsoleStream.writeBound + ConsoleStream.batchEntries * 100)
        raw.connection.resumeReading()
        let last = f.server.trace.lastSequence
        let lastLine = Array(#"{"seq":\#(last),"#.utf8)
        f.loop.run(timeout: 10) { raw.received.suffix(200).firstRange(of: lastLine) != nil }
        let received = reading.lines
        let skipped = received.compactMap { $0["skipped"]?.intValue }.reduce(0, +)
        let entries = received.filter { $0["seq"] != nil }.count
        #expect(skipped > 0)
        #expect(received.last?["seq"]?.intValue == Int64(last))
        // Every entry was either sent or counted as skipped, none twice.
        #expect(Int64(entries) + skipped == Int64(total))
    }

    @Test func aRangeLeavesOutConnectionsOpenedBeforeIt() throws {
        let trace = try TraceLog()
        trace.writeHeader(["clock": "virtual", "start": 1_700_000_000.0, "fixtures": ["users": []]])
        let t0 = Instant(seconds: 1_700_000_000)
        trace.record(.open, time: t0, connection: ConnectionID(1))
        trace.record(.in, time: t0.advanced(by: 10), connection: ConnectionID(1), text: "early")
        trace.record(.control, time: t0.advanced(by: 1010), frame: ["ms": 1000], text: "clock advanced 1000 ms, 0 timers fired")
        trace.record(.open, time: t0.advanced(by: 1010), connection: ConnectionID(2))
        trace.record(.in, time: t0.advanced(by: 1020), connection: ConnectionID(2), text: "kept")
        trace.record(.in, time: t0.advanced(by: 1030), connection: ConnectionID(1), text: "left out")
        let text = String(decoding: try #require(SessionTrace.text(of: trace, from: 3, to: 6)), as: UTF8.self)
        let lines = text.split(separator: "\n").map { try? JSONParser.parse(Array($0.utf8)) }
        #expect(lines.first??["format"]?.stringValue == "mockchat-trace")
        // The file starts where the entry before the range left the clock.
        #expect(lines.first??["start"]?.doubleValue == 1_700_000_000.01)
        #expect(lines.dropFirst().map { $0?["seq"]?.intValue } == [3, 4, 5])
        #expect(SessionTrace.text(of: trace, from: 7, to: 9) == nil)
        // A trace whose first entry is a clock advance starts where the clock stood before it.
        let advanced = try TraceLog()
        advanced.record(.control, time: t0.advanced(by: 1000), frame: ["ms": 1000], text: "clock advanced 1000 ms, 0 timers fired")
        let whole = String(decoding: try #require(SessionTrace.text(of: advanced, from: 0, to: .max)), as: UTF8.self)
        #expect(whole.contains(#""start":1700000000.0,"#) || whole.contains(#""start":1700000000.0}"#))
    }

    @Test func kickSendsDeviceKickedAndClosesWith4001() throws {
        let f = try fixture()
        let bob = try f.loggedIn("bob", device: "bob-phone", platform: .mobile)
        let reply = try f.control("POST", "/control/kick", body: #"{"uid":"bob","reason":"from a test"}"#)
        #expect(reply.status == 200)
        f.settle()
        let kicked = bob.events.first?.json
        #expect(kicked?["event"]?.stringValue == "device.kicked")
        #expect(kicked?["reason"]?.stringValue == "from a test")
        #expect(bob.closeInfo?.received == 4001)
        let control = f.server.trace.entries.first { $0.kind == .control }
        #expect(control?.route == "POST /control/kick")
        #expect(control?.text == "kick 1 device")
        #expect(try f.control("POST", "/control/kick", body: #"{"uid":"bob"}"#).status == 404)
        #expect(try f.control("POST", "/control/kick", body: #"{"uid":"bob","colour":"red"}"#).status == 400)
        #expect(try f.control("POST", "/control/kick", body: #"{"uid":"alice","byPlatform":"fridge"}"#).status == 400)
        let waiting = try f.connect()
        let id = try #require(f.server.engine.connections.last?.id.description)
        #expect(try f.control("POST", "/control/kick", body: #"{"connection":"\#(id)"}"#).status == 409)
        _ = waiting
    }

    @Test func presenceListsDevicesAndWhoSeesWhom() throws {
        let f = try fixture()
        let alice = try f.loggedIn("alice", device: "alice-laptop")
        let bob = try f.loggedIn("bob", device: "bob-phone", platform: .mobile, presence: .none)
        let presence = try #require(try f.control("GET", "/control/presence").json)
        #expect(presence["online"] == ["alice", "bob"])
        #expect(presence["devices"]?["bob"]?.arrayValue?.first?["deviceId"]?.stringValue == "bob-phone")
        let subscriptions = try #require(presence["subscriptions"]?.arrayValue)
        #expect(subscriptions.first { $0["uid"] == "alice" }?["watching"] == ["bob"])
        #expect(subscriptions.first { $0["uid"] == "bob" }?["watching"] == [])
        #expect(subscriptions.first { $0["uid"] == "bob" }?["subscription"]?["mode"] == "none")
        _ = (alice, bob)
    }
}
