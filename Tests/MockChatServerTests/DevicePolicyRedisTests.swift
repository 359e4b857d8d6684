import ChatProtocol
import EventLoop
import Foundation
import MockChatServer
import Testing

/// The cluster's claim script (`ClusterScripts.claim`, the device policy in Lua) run on a
/// real redis-server against the golden table that `DevicePolicy.decide` follows
/// (`DevicePolicyTests`): one rule for one node and the cluster.
@Suite(.serialized) struct DevicePolicyRedisTests {
    @Test func theClaimScriptFollowsTheGoldenTable() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        for golden in DevicePolicyGoldenTable.cases {
            let outcome = try redis.claim(golden)
            #expect(outcome.decision == golden.expected, "\(golden.name)")
            // What Redis holds afterwards: the newcomer unless refused, without the displaced.
            let displaced = Set(golden.displaced?.map(\.id) ?? [])
            var held = Set(golden.holders.map(\.id)).subtracting(displaced)
            if golden.displaced != nil { held.insert(RedisServer.newcomer) }
            #expect(outcome.held == held, "\(golden.name)")
        }
    }

    /// One order of age for both languages: the holders' `<` in Swift and `older` in the
    /// claim script agree, ties in login time going to the lower field.
    @Test func theClaimScriptOrdersDevicesAsTheHoldersDo() throws {
        let redis = try RedisServer()
        defer { redis.stop() }
        let orders: [[DevicePolicy.Holder<String>]] = [
            [DevicePolicy.Holder("b/c1", deviceId: "p1", platform: .mobile, since: 5),
             DevicePolicy.Holder("a/c2", deviceId: "p2", platform: .mobile, since: 5)],
            [DevicePolicy.Holder("a/c2", deviceId: "p2", platform: .mobile, since: 6),
             DevicePolicy.Holder("b/c1", deviceId: "p1", platform: .mobile, since: 5)],
        ]
        for holders in orders {
            let oldest = try #require(holders.sorted().first)
            let golden = DevicePolicyCase(name: "oldest of \(holders.map(\.id))", mobileLimit: 2, clientKickControl: false,
                                          holders: holders, login: DevicePolicy.Login(deviceId: "p3", platform: .mobile),
                                          displaced: [DevicePolicy.Displacement(oldest.id, .mobileLimit)])
            #expect(golden.policy.decide(golden.login, holders: holders.sorted()) == golden.expected)
            #expect(try redis.claim(golden).decision == golden.expected, "\(golden.name)")
        }
    }
}

/// A redis-server on a loopback port for one test, and a command connection on a loop.
private final class RedisServer {
    static let newcomer = "z/c99"
    static let uid = "bob"
    private(set) var process = Process()
    let loop: EventLoop
    let connection: RedisConnection

    init() throws {
        guard let binary = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
            .first(where: FileManager.default.isExecutableFile) else {
            throw RedisFailure("redis-server is not installed (scripts/bootstrap installs it)")
        }
        loop = try EventLoop()
        var lastError = "no port tried"
        for attempt in 0..<20 {
            // Below the ephemeral range (32768 up), where port-0 listeners of other tests live.
            let port = 20_000 + Int(ProcessInfo.processInfo.processIdentifier % 12_000) + attempt * 7
            process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                 "--loglevel", "warning"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if let connection = Self.connect(loop: loop, port: port, while: process) {
                if Self.reaches(process, through: connection, on: loop) {
                    self.connection = connection
                    return
                }
                connection.close()
            }
            lastError = "redis-server did not answer on port \(port)"
            Self.kill(process)
        }
        throw RedisFailure(lastError)
    }

    /// Connects, retrying while the server starts (at most 5 s); nil if it exited.
    private static func connect(loop: EventLoop, port: Int, while process: Process) -> RedisConnection? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, process.isRunning {
            guard let connection = try? RedisConnection(loop: loop, host: "127.0.0.1", port: port) else { return nil }
            var state: Bool?
            connection.onConnect = { state = true }
            connection.onDisconnect = { _ in state = false }
            _ = loop.run(timeout: 5) { state != nil }
            if state == true { return connection }
        }
        return nil
    }

    /// Whether the connection reached the redis-server this test started, not whatever
    /// else held the port.
    private static func reaches(_ process: Process, through connection: RedisConnection, on loop: EventLoop) -> Bool {
        var info: String?
        connection.send(["INFO", "server"]) { info = $0?.text ?? "" }
        guard loop.run(timeout: 5, until: { info != nil }), let info else { return false }
        return info.split(whereSeparator: \.isNewline).contains { $0 == "process_id:\(process.processIdentifier)" }
    }

    func command(_ arguments: [String]) throws -> RedisReply {
        var reply: RedisReply??
        connection.send(arguments) { reply = .some($0) }
        guard loop.run(timeout: 5, until: { reply != nil }), let answer = reply ?? nil else {
            throw RedisFailure("no reply to \(arguments.first ?? "")")
        }
        return answer
    }

    /// Stores the case's holders (their `since`, or else 1, 2, ... in order), runs the claim script
    /// for the newcomer, and reads back its reply and the user's devices.
    func claim(_ golden: DevicePolicyCase) throws -> (decision: DevicePolicy.Decision<String>, held: Set<String>) {
        _ = try command(["FLUSHALL"])
        for (index, holder) in golden.holders.enumerated() {
            let parts = holder.id.split(separator: "/").map(String.init)
            let device = ClusterDevice(uid: Self.uid, node: parts[0], connection: parts[1], deviceId: holder.deviceId,
                                       platform: holder.platform, since: holder.since > 0 ? holder.since : Double(index + 1))
            _ = try command(["HSET", "mockchat:devices:\(Self.uid)", holder.id, ClusterEvent.storedValue(device)])
        }
        let parts = Self.newcomer.split(separator: "/").map(String.init)
        let device = ClusterDevice(uid: Self.uid, node: parts[0], connection: parts[1], deviceId: golden.login.deviceId,
                                   platform: golden.login.platform, since: 100)
        var reply: RedisReply??
        let arguments = ClusterScripts.claimArguments(device, DeviceClaim(golden.policy, golden.login),
                                                      message: "{\"t\":\"add\"}", now: 100)
        connection.evaluate(ClusterScripts.claim, arguments) { reply = .some($0) }
        guard loop.run(timeout: 5, until: { reply != nil }), let answer = reply ?? nil else {
            throw RedisFailure("no reply to the claim of \(golden.name)")
        }
        let decision: DevicePolicy.Decision<String>
        switch answer {
        case .integer(0): decision = .refused
        case .array(let items):
            let texts = items.compactMap(\.text)
            decision = .admitted(displacing: stride(from: 0, to: texts.count - 1, by: 2).map { index in
                DevicePolicy.Displacement(texts[index], DevicePolicy.Reason(rawValue: texts[index + 1]) ?? .sameDevice)
            })
            if texts.count != items.count || texts.count % 2 != 0 { throw RedisFailure("odd claim reply \(answer)") }
            if texts.enumerated().contains(where: { $0.offset % 2 == 1 && DevicePolicy.Reason(rawValue: $0.element) == nil }) {
                throw RedisFailure("unknown reason in \(answer)")
            }
        default: throw RedisFailure("claim of \(golden.name) answered \(answer)")
        }
        let held = try command(["HKEYS", "mockchat:devices:\(Self.uid)"]).elements.compactMap(\.text)
        return (decision, Set(held))
    }

    func stop() {
        connection.close()
        _ = loop.shutdown()
        Self.kill(process)
    }

    /// SIGKILL: the test process's threads block SIGTERM, and a child inherits the mask.
    private static func kill(_ process: Process) {
        if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

private struct RedisFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
