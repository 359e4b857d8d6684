import ChatProtocol
import EventLoop
@testable import MockChatServer
import MockChatTestSupport
import Testing

/// The console's live stream under load (docs/CONSOLE.md, "Cost"): a flush with more
/// than ``RoutineTraffic/threshold`` pings and pongs sends each run of them as one
/// `{"routine":...}` record, every other entry in full, and nothing is coalesced under
/// a light load. Read over a real socket, as the page reads it.
@Suite("Web console: routine traffic coalesced")
struct ConsoleCoalescingTests {
    /// What a stream line stands for, in a form to compare whole lists.
    enum Line: Equatable, CustomStringConvertible {
        case entry(Int)
        case routine(count: Int, from: Int, to: Int, connections: Int)
        case skipped(count: Int, from: Int, to: Int)

        init?(_ json: JSONValue) {
            func number(_ value: JSONValue?) -> Int { Int(value?.intValue ?? -1) }
            if let seq = json["seq"]?.intValue {
                self = .entry(Int(seq))
            } else if let r = json["routine"] {
                self = .routine(count: number(r["count"]), from: number(r["from"]), to: number(r["to"]),
                                connections: number(r["connections"]))
            } else if json["skipped"] != nil {
                self = .skipped(count: number(json["skipped"]), from: number(json["from"]), to: number(json["to"]))
            } else {
                return nil
            }
        }

        var description: String {
            switch self {
            case .entry(let seq): "entry \(seq)"
            case .routine(let count, let from, let to, let connections): "routine \(count) \(from)-\(to) on \(connections)"
            case .skipped(let count, let from, let to): "skipped \(count) \(from)-\(to)"
            }
        }
    }

    func fixture() throws -> ServerFixture {
        try ServerFixture(server: { $0.console = true })
    }

    /// A stream opened at the trace's end, its hello received: nothing is pending, so
    /// what is recorded next in one go falls into one flush.
    func openedStream(_ f: ServerFixture) throws -> ConsoleStreamReading {
        let stream = try ConsoleStreamReading(f, since: f.server.trace.lastSequence)
        f.loop.run(timeout: 5) { stream.lines.contains { $0["hello"] != nil } }
        return stream
    }

    /// The stream's lines after its hello, once they account for every entry so far.
    func received(_ f: ServerFixture, _ stream: ConsoleStreamReading) -> [Line] {
        let last = f.server.trace.lastSequence
        f.loop.run(timeout: 10) { stream.reached >= last }
        return stream.lines.compactMap(Line.init)
    }

    /// Records a ping from connection `c` and its pong, as the server traces them.
    func pingAndPong(_ f: ServerFixture, id: Int64, on c: Int) {
        lonePing(f, id: id, on: c)
        lonePong(f, id: id, on: c)
    }

    func lonePing(_ f: ServerFixture, id: Int64, on c: Int) {
        let ping = Array(#"{"id":\#(id),"op":"ping"}"#.utf8)
        ping.withUnsafeBytes { f.server.trace.record(.in, time: f.now, connection: ConnectionID(c), uid: "u\(c)", deviceId: "d\(c)", frameText: $0) }
    }

    func lonePong(_ f: ServerFixture, id: Int64, on c: Int) {
        var pong: [UInt8] = []
        ServerMessage.writePong(id: id, serverTime: f.now.seconds, into: &pong)
        pong.withUnsafeBytes { f.server.trace.record(.out, time: f.now, connection: ConnectionID(c), uid: "u\(c)", deviceId: "d\(c)", frameText: $0) }
    }

    @Test func routineFramesAreExactlyCompactPingsAndPongs() throws {
        func pong(_ id: Int64, _ time: Double) -> [UInt8] {
            var bytes: [UInt8] = []
            ServerMessage.writePong(id: id, serverTime: time, into: &bytes)
            return bytes
        }
        for bytes in [pong(0, 1_700_000_000), pong(12_345, 1_700_000_000.125), pong(-3, 0.5), pong(7, 1e21)] {
            #expect(bytes.withUnsafeBytes(ServerMessage.isCompactPong), "\(String(decoding: bytes, as: UTF8.self))")
        }
        for text in [#"{"id":1,"result":{}}"#, #"{"id":"a","result":{"pong":true,"serverTime":1.0}}"#,
                     #"{"id":1,"result":{"pong":true,"serverTime":1.0}} "#, #"{"id":1,"result":{"pong":true,"serverTime":}}"#,
                     #"{"id":1,"result":{"pong":true,"serverTime":1.0,"x":1}}"#,
                     #"{"id":1,"error":{"errorCode":"ERR_NOT_LOGGED_IN","errorDescription":"No user is logged in"}}"#,
                     #"{"id":,"result":{"pong":true,"serverTime":1.0}}"#, "{}", ""] {
            #expect(!Array(text.utf8).withUnsafeBytes(ServerMessage.isCompactPong), "\(text)")
        }
        // Only an inbound ping and an outbound pong are routine.
        let trace = try TraceLog()
        let t = Instant(seconds: 1_700_000_000)
        let ping = Array(#"{"id":1,"op":"ping"}"#.utf8), pongBytes = pong(1, 1_700_000_000)
        for (kind, bytes) in [(TraceLog.Kind.in, ping), (.out, pongBytes), (.out, ping), (.in, pongBytes),
                              (.in, Array(#"{"op":"ping","id":1}"#.utf8))] {
            bytes.withUnsafeBytes { trace.record(kind, time: t, connection: ConnectionID(1), uid: "u", deviceId: "d", frameText: $0) }
        }
        trace.record(.close, time: t, connection: ConnectionID(1), code: 1000)
        let entries = trace.entries
        #expect(entries.indices.map { RoutineTraffic.isRoutine(entries, at: $0) } == [true, true, false, false, false, false])
    }

    @Test func aFlushOverTheThresholdSendsEachRunAsOneRecordAndEverythingElseInFull() throws {
        let f = try fixture()
        let stream = try openedStream(f)
        let base = f.server.trace.lastSequence
        f.server.trace.record(.control, time: f.now, text: "before the load")            // base+1
        for i in 0..<30 { pingAndPong(f, id: Int64(i), on: 1 + i % 3) }                   // base+2...base+61
        f.server.trace.record(.out, time: f.now, connection: ConnectionID(2), uid: "u2", deviceId: "d2",
                              frame: ["id": 99, "error": ["errorCode": "ERR_INTERNAL", "errorDescription": "scripted"]]) // base+62
        lonePing(f, id: 100, on: 1)                                                       // base+63: a run of one
        f.server.trace.record(.close, time: f.now, connection: ConnectionID(3), uid: "u3", deviceId: "d3",
                              text: "server closes", code: 4001)                                    // base+64
        for i in 0..<5 { pingAndPong(f, id: Int64(200 + i), on: 2) }                    // base+65...base+74
        f.server.trace.record(.control, time: f.now, text: "clock advanced 5 ms, 0 timers fired")  // base+75
        lonePong(f, id: 300, on: 1)                                                       // base+76, at the end: alone
        #expect(received(f, stream) == [
            .entry(base + 1),
            .routine(count: 60, from: base + 2, to: base + 61, connections: 3),
            .entry(base + 62), .entry(base + 63), .entry(base + 64),
            .routine(count: 10, from: base + 65, to: base + 74, connections: 1),
            .entry(base + 75), .entry(base + 76),
        ])
        // The record carries the first entry's time, as an entry does.
        let record = try #require(stream.lines.first { $0["routine"] != nil })
        #expect(record["routine"]?["t"]?.doubleValue == f.now.seconds)
    }

    @Test func atTheThresholdEveryEntryGoesInFullAndOneMoreCoalesces() throws {
        let f = try fixture()
        let stream = try openedStream(f)
        var base = f.server.trace.lastSequence
        let pairs = RoutineTraffic.threshold / 2
        for i in 0..<pairs { pingAndPong(f, id: Int64(i), on: 1) }
        let first = received(f, stream)
        #expect(first == (1...(2 * pairs)).map { .entry(base + $0) })
        base = f.server.trace.lastSequence
        for i in 0..<pairs { pingAndPong(f, id: Int64(100 + i), on: 1 + i % 2) }
        lonePing(f, id: 200, on: 1)
        #expect(Array(received(f, stream).dropFirst(first.count)) == [
            .routine(count: 2 * pairs + 1, from: base + 1, to: base + 2 * pairs + 1, connections: 2),
        ])
    }

    @Test func underALightLoadOfRealClientsNothingIsCoalesced() throws {
        let f = try fixture()
        let stream = try openedStream(f)
        let since = f.server.trace.lastSequence
        let clients = try ["alice", "bob", "carol"].map { try f.loggedIn($0, device: "\($0)-laptop") }
        for client in clients {
            for _ in 0..<5 { client.send("ping") }
        }
        f.settle()
        let lines = received(f, stream)
        // Logins, their presence events and 15 pings with their pongs: every entry in full.
        #expect(f.server.trace.lastSequence - since > 30)
        #expect(lines == (since + 1...f.server.trace.lastSequence).map { .entry($0) })
    }

    @Test func aBurstOfRealPingsIsCoalescedWithEveryEntryAccountedForOnce() throws {
        let f = try fixture()
        let clients = try ["alice", "bob", "carol"].map { try f.loggedIn($0, device: "\($0)-laptop") }
        let stream = try openedStream(f)
        let since = f.server.trace.lastSequence
        for client in clients {
            for _ in 0..<100 { client.send("ping") }
        }
        clients[0].send("users.get", ["uid": "bob"])
        f.settle()
        let lines = received(f, stream)
        var covered: [Int] = []
        let entries = f.server.trace.entries(after: since)
        for line in lines {
            switch line {
            case .entry(let seq):
                covered.append(seq)
            case .routine(let count, let from, let to, let connections):
                covered += Array(from...to)
                #expect(count == to - from + 1)
                let run = entries.filter { $0.sequence >= from && $0.sequence <= to }
                #expect(run.count == count)
                #expect(Set(run.compactMap(\.connection)).count == connections)
                #expect(run.allSatisfy { entry in
                    (entry.kind == .in && entry.frame?["op"] == "ping") || (entry.kind == .out && entry.frame?["result"]?["pong"] == true)
                })
            case .skipped:
                Issue.record("a stream that keeps up skips nothing: \(line)")
            }
        }
        // Every entry once, in order; the 600 pings and pongs in records, the request and its reply in full.
        #expect(covered == Array(since + 1...f.server.trace.lastSequence))
        #expect(lines.contains { if case .routine = $0 { true } else { false } })
        let full = Set(lines.compactMap { if case .entry(let seq) = $0 { seq } else { nil } })
        #expect(entries.filter { $0.frame?["op"] == "users.get" || $0.frame?["result"]?["user"] != nil }
            .allSatisfy { full.contains($0.sequence) })
    }

    @Test func aResetBetweenTwoBurstsIsSkippedAndTheBurstAfterItCoalesced() throws {
        let f = try fixture()
        let stream = try openedStream(f)
        let base = f.server.trace.lastSequence
        for i in 0..<30 { pingAndPong(f, id: Int64(i), on: 1 + i % 2) }                   // base+1...base+60
        f.server.resetLocally()                                                           // base+61: the reset's entry
        for i in 0..<30 { pingAndPong(f, id: Int64(100 + i), on: 3) }                     // base+62...base+121
        #expect(received(f, stream) == [
            .skipped(count: 60, from: base + 1, to: base + 60),
            .entry(base + 61),
            .routine(count: 60, from: base + 62, to: base + 121, connections: 1),
        ])
    }
}
