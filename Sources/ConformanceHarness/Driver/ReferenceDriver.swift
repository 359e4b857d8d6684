import ChatProtocol
import EventLoop
import Foundation
import MockChatCore
import ReferenceClient

/// `mockchat driver`: the reference model served over driver protocol v1
/// (docs/DRIVER.md), so that the catalogue run through a driver can be compared with
/// the in-process run, verdict by verdict.
///
/// Messages arrive in an inbox (filled by a stdin reader or a WebSocket bridge) and
/// replies and events leave through `output`. Each `start` gets a fresh loop whose
/// clock is the scenario's; clients are ``SDKClient``s on it.
public final class ReferenceDriver {
    private let inbox: DriverInbox
    private let output: (JSONValue) -> Void
    private let profilesFolder: String
    private var loop: EventLoop
    private var waker: LoopWaker
    private var server = SocketAddress(host: "127.0.0.1", port: 0)
    private var path = "/v1/ws"
    private var clients: [String: SDKClient] = [:]
    private var names: [String] = []
    /// How much of each client's log has been reported.
    private var reported: [String: Int] = [:]
    /// Calls answered `pending`: client name and call → request id.
    private var pending: [String: [CallID: Int64]] = [:]
    private var profiles: [String: Profile] = [:]

    /// What the reference driver says in its `hello`.
    public static let hello: JSONValue = [
        "type": "hello", "protocol": 1,
        "sdk": ["name": "mockchat-reference", "version": "1.0.0"],
        "profiles": ["cometchat-ios", "nexconn-ios"],
        "virtualTime": true,
        "commands": .array((["create"] + DriverCodec.sdkCommands + ["inspect"]).map { .string($0) }),
        "events": ["connection", "connectionListener", "presence", "socketOpening", "result"],
        "sockets": true,
    ]

    public init(inbox: DriverInbox, profilesFolder: String = "Fixtures/profiles",
                output: @escaping (JSONValue) -> Void) throws(ScenarioError) {
        self.inbox = inbox
        self.output = output
        self.profilesFolder = profilesFolder
        (loop, waker) = try Self.makeLoop(.virtual(start: .virtualEpoch), inbox: inbox)
    }

    /// Says hello, then answers messages until the harness goes away.
    public func serve() {
        output(Self.hello)
        while true {
            loop.run(timeout: 3600) { !inbox.isEmpty }
            for input in inbox.take() {
                switch input {
                case .closed:
                    discardClients()
                    waker.close()
                    loop.shutdown()
                    return
                case .message(let bytes):
                    handle(bytes)
                case .overlong(let limit):
                    output(["type": "error", "message": .string("a line longer than \(limit) bytes")])
                }
            }
        }
    }

    // MARK: Messages

    private func handle(_ bytes: [UInt8]) {
        guard let message = try? JSONParser.parse(bytes), let type = message["type"]?.stringValue else {
            return output(["type": "error", "message": .string("not a JSON message with a type")])
        }
        let id = message["id"] ?? .null
        let outcome: Result<JSONObject, DriverError>
        switch type {
        case "start": outcome = start(message)
        case "end":
            discardClients()
            outcome = .success(JSONObject())
        case "settle":
            outcome = .success(JSONObject([("state", settledState())]))
        case "advance": outcome = advance(message)
        case "command": outcome = command(message, id: id.intValue ?? 0)
        default: outcome = .failure(.unknownCommand("no message type '\(type)'"))
        }
        var reply = JSONObject([("type", "reply"), ("id", id)])
        switch outcome {
        case .success(let fields):
            reply["ok"] = true
            for (key, value) in fields { reply[key] = value }
        case .failure(let error):
            reply["ok"] = false
            reply["error"] = error.json
        }
        output(.object(reply))
    }

    private func start(_ message: JSONValue) -> Result<JSONObject, DriverError> {
        guard let host = message["server"]?["host"]?.stringValue, let port = message["server"]?["port"]?.intValue else {
            return .failure(.badArguments("start needs server.host and server.port"))
        }
        guard (0...65535).contains(port) else {
            return .failure(.badArguments("server.port must be an integer from 0 to 65535, not \(port)"))
        }
        discardClients()
        server = SocketAddress(host: host, port: Int(port))
        path = message["server"]?["path"]?.stringValue ?? "/v1/ws"
        let virtual = message["clock"]?["mode"]?.stringValue != "system"
        let milliseconds = message["clock"]?["now"]?.intValue ?? Instant.virtualEpoch.milliseconds
        let now: Instant
        do throws(BoundedNumberError) {
            now = try BoundedNumber.instant(milliseconds: milliseconds, "clock.now")
        } catch {
            return .failure(.badArguments(error.description))
        }
        do {
            waker.close()
            loop.shutdown()
            (loop, waker) = try Self.makeLoop(virtual ? .virtual(start: now) : .system, inbox: inbox)
        } catch {
            return .failure(.failed("cannot create a loop: \(error)"))
        }
        return .success(JSONObject())
    }

    private func advance(_ message: JSONValue) -> Result<JSONObject, DriverError> {
        guard loop.clock.isVirtual else { return .failure(.unsupported("the clock is the system clock in this scenario")) }
        guard let to = message["to"]?.intValue else { return .failure(.badArguments("advance needs 'to'")) }
        // As far as a scenario may wait in one step (ScenarioLoader.maxDurationSeconds), checked before any arithmetic.
        let now = loop.clock.now.milliseconds, longest = Int64(ScenarioLoader.maxDurationSeconds) * 1000
        guard to <= now || to - now <= longest else {
            return .failure(.badArguments("'to' may be at most 366 days ahead (\(now + longest)), not \(to)"))
        }
        let target = Instant(milliseconds: to)
        if message["fire"]?.boolValue == false {
            if let due = loop.clock.nextDeadline, due < target {
                return .failure(.badArguments("a timer is due at \(due.milliseconds), before \(to)"))
            }
            loop.clock.move(to: target)
        } else {
            loop.clock.advance(to: target) { loop.settle() }
        }
        return .success(JSONObject([("state", settledState())]))
    }

    private func command(_ message: JSONValue, id: Int64) -> Result<JSONObject, DriverError> {
        guard let name = message["client"]?.stringValue, let command = message["command"]?.stringValue else {
            return .failure(.badArguments("a command needs 'client' and 'command'"))
        }
        let args = message["args"] ?? [:]
        if command == "create" { return create(name, args) }
        guard let client = clients[name] else { return .failure(.unknownClient("no client '\(name)'")) }
        if command == "inspect" {
            return .success(JSONObject([("state", [
                "status": .string(client.status.rawValue), "backgroundTaskEnabled": .bool(client.backgroundTaskEnabled),
                "loggedInUser": client.loggedInUser.map { .string($0.uid) } ?? .null,
            ])]))
        }
        let sdkCommand: SDKCommand
        switch DriverCodec.decode(command, args) {
        case .failure(let error): return .failure(error)
        case .success(let decoded): sdkCommand = decoded
        }
        let call = client.perform(sdkCommand)
        loop.settle()
        report()
        guard let call else { return .success(JSONObject()) }
        if let result = client.result(of: call) { return .success(JSONObject([("result", DriverCodec.encode(result))])) }
        pending[name, default: [:]][call] = id
        return .success(JSONObject([("pending", true)]))
    }

    private func create(_ name: String, _ args: JSONValue) -> Result<JSONObject, DriverError> {
        guard clients[name] == nil else { return .failure(.badArguments("client '\(name)' already exists")) }
        let profileName = args["profile"]?.stringValue ?? "cometchat-ios"
        var profile: Profile
        if let cached = profiles[profileName] {
            profile = cached
        } else {
            do {
                profile = try Profile.load(named: profileName, in: URL(fileURLWithPath: profilesFolder))
            } catch {
                return .failure(.unsupported("profile '\(profileName)': \(error)"))
            }
            profiles[profileName] = profile
        }
        if let declared = args["parameters"]?.objectValue {
            do {
                profile = try profile.applying(Dictionary(uniqueKeysWithValues: declared.map { ($0.key, $0.value) }))
            } catch {
                return .failure(.badArguments("parameters: \(error)"))
            }
        }
        let seed = args["seed"]?.intValue.map { UInt64(bitPattern: $0) } ?? 1
        clients[name] = SDKClient(name: name, loop: loop, server: server, profile: profile, seed: seed, path: path)
        names.append(name)
        reported[name] = 0
        return .success(JSONObject())
    }

    // MARK: State and events

    /// Settles the loop, reports what happened, and describes the clock and sockets.
    private func settledState() -> JSONValue {
        loop.settle()
        report()
        return [
            "now": .integer(loop.clock.now.milliseconds),
            "nextDeadline": loop.clock.nextDeadline.map { .integer($0.milliseconds) } ?? .null,
            "sockets": .array(loop.clientSockets.counts.map { count in
                ["port": .integer(Int64(count.port)), "state": count.isOpen ? "open" : "opening",
                 "sent": .integer(Int64(count.sent)), "received": .integer(Int64(count.received))]
            }),
        ]
    }

    /// Writes an event for everything the clients logged since the last report.
    private func report() {
        for name in names {
            guard let client = clients[name] else { continue }
            let log = client.log
            for observation in log[(reported[name] ?? 0)...] {
                if case .callCompleted(let call, let result) = observation.event {
                    guard let id = pending[name]?.removeValue(forKey: call) else { continue }
                    output(["type": "event", "client": .string(name), "at": .integer(observation.at.milliseconds),
                            "event": "result", "command": .integer(id), "result": DriverCodec.encode(result)])
                } else {
                    DriverCodec.events(observation).forEach(output)
                }
            }
            reported[name] = log.count
        }
    }

    private func discardClients() {
        for client in clients.values { client.shutdown() }
        loop.settle(timeout: 1)
        clients = [:]
        names = []
        reported = [:]
        pending = [:]
    }

    private static func makeLoop(_ mode: Clock.Mode, inbox: DriverInbox) throws(ScenarioError) -> (EventLoop, LoopWaker) {
        let loop: EventLoop
        do { loop = try EventLoop(clockMode: mode) } catch { throw ScenarioError("cannot create a loop: \(error)") }
        let waker = LoopWaker(loop: loop)
        inbox.attach(waker)
        return (loop, waker)
    }
}
