import ChatProtocol
import EventLoop
import MockChatCore

/// One scenario's conversation with a driver (docs/DRIVER.md): requests and their
/// replies, events handed to `onEvent`, and the deadline that turns a silent, dead or
/// babbling driver into a failed scenario whose message names the driver, the request
/// and the tail of its stderr.
///
/// Confined to the scenario's loop, which keeps running (the in-process server serves
/// the SDK) while a reply is awaited.
final class DriverLink {
    let channel: DriverChannel
    let loop: EventLoop
    /// Wall-clock seconds each reply may take.
    let timeout: Double
    private(set) var capabilities: DriverCapabilities!
    /// The driver's clock and sockets as of its last `state`.
    private(set) var now = Instant(milliseconds: 0)
    private(set) var nextDeadline: Instant?
    private(set) var sockets: [SocketCount] = []
    /// A driver without `sockets`: how many of its upgrades are unanswered (`opening`).
    private(set) var unansweredUpgrades = 0
    /// Receives every event (`type: event`) in order.
    var onEvent: (JSONValue) throws(ScenarioError) -> Void = { _ in }
    private let waker: LoopWaker
    /// Inputs taken from the inbox and not handled yet (what came after an awaited reply).
    private var backlog: [DriverInput] = []
    private var nextID: Int64 = 1
    /// Set once the driver failed; every later request fails with it at once.
    private var failure: ScenarioError?
    /// Set when the driver answered `unsupported`: the request and the driver's words.
    /// The scenario is then skipped rather than failed.
    private(set) var unsupported: String?

    /// Attaches to `channel` and waits for the driver's `hello` (unless it already sent it).
    init(channel: DriverChannel, loop: EventLoop, timeout: Double) throws(ScenarioError) {
        self.channel = channel
        self.loop = loop
        self.timeout = timeout
        waker = LoopWaker(loop: loop)
        channel.inbox.attach(waker)
        // Left over from a previous scenario on a long-lived connection: only a new
        // hello or the end of that connection matter.
        if channel.outlivesScenarios {
            for input in channel.inbox.take() { absorbStale(input) }
        }
        if channel.hello == nil {
            // Start-up (a Python or JVM process on a busy machine) gets at least 10 s, even
            // when replies must come quicker.
            try wait(for: "hello", timeout: channel.helloTimeout ?? max(timeout, 10)) { message throws(ScenarioError) in
                guard message["type"]?.stringValue == "hello" else {
                    throw ScenarioError("sent \(Self.excerpt(message.description)) before its hello")
                }
                channel.hello = message
                return true
            }
        }
        do {
            capabilities = try DriverCapabilities(hello: channel.hello!)
        } catch {
            throw fail(error.description, doing: "hello", abandon: true)
        }
    }

    /// The SDK as the driver named it.
    var sdkDescription: String { "\(capabilities.sdkName) \(capabilities.sdkVersion)" }

    /// Sends a request and returns its reply (`ok: true`); a protocol error (`ok: false`)
    /// is thrown with the driver's message. `doing` names the request in messages.
    @discardableResult
    func request(_ type: String, _ fields: [(String, JSONValue)] = [], doing: String) throws(ScenarioError) -> JSONValue {
        if let failure { throw failure }
        let id = nextID
        nextID += 1
        var message = JSONObject([("type", .string(type)), ("id", .integer(id))])
        for (key, value) in fields { message[key] = value }
        guard channel.send(.object(message)) else {
            return try awaitEnd(doing: doing)
        }
        var reply: JSONValue = .null
        try wait(for: doing) { message throws(ScenarioError) in
            guard message["type"]?.stringValue == "reply" else {
                throw ScenarioError("wrote \(Self.excerpt(message.description)) where a reply or an event was expected")
            }
            guard message["id"]?.intValue == id else {
                throw ScenarioError("replied to request \(message["id"]?.description ?? "(no id)") while \(id) was awaited")
            }
            reply = message
            return true
        }
        if reply["ok"]?.boolValue == false {
            let code = reply["error"]?["code"]?.stringValue ?? "error"
            let text = reply["error"]?["message"]?.stringValue ?? ""
            if code == "unsupported" { unsupported = "\(doing): \(text)" }
            throw ScenarioError("driver \(channel.label) refused \(doing): \(code): \(text)")
        }
        if let state = reply["state"], let now = state["now"]?.intValue {
            self.now = try Self.instant(now, "state.now")
            nextDeadline = try state["nextDeadline"]?.intValue.map { value throws(ScenarioError) in
                try Self.instant(value, "state.nextDeadline")
            }
            sockets = (state["sockets"]?.arrayValue ?? []).map { socket in
                SocketCount(port: Int(socket["port"]?.intValue ?? 0), isOpen: socket["state"]?.stringValue != "opening",
                            sent: Int(socket["sent"]?.intValue ?? 0), received: Int(socket["received"]?.intValue ?? 0))
            }
            unansweredUpgrades = Int(state["opening"]?.intValue ?? 0)
        }
        return reply
    }

    /// Ends the scenario on the driver's side and lets it go.
    func end() {
        if failure == nil { _ = try? request("end", doing: "end") }
        channel.finish()
        channel.inbox.attach(nil)
        waker.close()
    }

    // MARK: Reading

    /// Runs the loop until `accept` takes a message (events go to `onEvent` on the way).
    private func wait(for doing: String, timeout: Double? = nil,
                      _ accept: (JSONValue) throws(ScenarioError) -> Bool) throws(ScenarioError) {
        let timeout = timeout ?? self.timeout
        let deadline = MonotonicTime.after(seconds: timeout)
        while true {
            backlog += channel.inbox.take()
            while !backlog.isEmpty {
                let input = backlog.removeFirst()
                switch input {
                case .closed(let why):
                    channel.hello = nil
                    throw fail(why, doing: doing)
                case .overlong(let limit):
                    throw fail("wrote a line longer than \(limit) bytes, the limit of a driver line", doing: doing,
                               abandon: true)
                case .message(let bytes):
                    guard let message = try? JSONParser.parse(bytes), message.objectValue != nil,
                          message["type"]?.stringValue != nil else {
                        throw fail("wrote malformed JSON: \(Self.excerpt(String(decoding: bytes, as: UTF8.self)))",
                                   doing: doing, abandon: true)
                    }
                    if message["type"]?.stringValue == "event" {
                        do { try onEvent(message) } catch { throw fail(error.description, doing: doing, abandon: true) }
                        continue
                    }
                    do {
                        if try accept(message) { return }
                    } catch {
                        throw fail(error.description, doing: doing, abandon: true)
                    }
                }
            }
            let now = MonotonicTime.now()
            guard now < deadline else {
                throw fail("did not answer within \(Self.seconds(timeout))", doing: doing, abandon: true)
            }
            loop.run(timeout: Double(deadline - now) / 1e9) { !channel.inbox.isEmpty }
        }
    }

    /// After a failed write: the driver is gone; its exit status tells why.
    private func awaitEnd(doing: String) throws(ScenarioError) -> JSONValue {
        try wait(for: doing) { _ in false }
        throw fail("stopped reading", doing: doing, abandon: true)
    }

    private func absorbStale(_ input: DriverInput) {
        switch input {
        case .closed: channel.hello = nil
        case .overlong: break
        case .message(let bytes):
            if let message = try? JSONParser.parse(bytes), message["type"]?.stringValue == "hello" { channel.hello = message }
        }
    }

    /// Records the failure, stops the driver when it misbehaved, and builds the message.
    private func fail(_ what: String, doing: String, abandon: Bool = false) -> ScenarioError {
        if abandon { channel.abandon() }
        var text = "driver \(channel.label) \(what) during \(doing)"
        let tail = channel.stderrTail
        if !tail.isEmpty { text += "\ndriver stderr (last lines):\n" + tail.map { "  " + $0 }.joined(separator: "\n") }
        let error = ScenarioError(text)
        failure = error
        return error
    }

    private static func excerpt(_ text: String) -> String {
        let short = text.count > 120 ? text.prefix(120) + "..." : Substring(text)
        return "\"\(short)\""
    }

    /// An instant a driver wrote (Unix milliseconds), checked before the harness's clock
    /// does arithmetic with it.
    static func instant(_ milliseconds: Int64, _ field: String) throws(ScenarioError) -> Instant {
        do throws(BoundedNumberError) {
            return try BoundedNumber.instant(milliseconds: milliseconds, field)
        } catch {
            throw ScenarioError("the driver's \(error)")
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
