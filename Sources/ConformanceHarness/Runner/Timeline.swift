import EventLoop
import MockChatCore

/// The one timeline of a scenario (docs/DRIVER.md, "One timeline"): the harness moves
/// the server's clock, its own loop's and the driver's, in a fixed order, and goes on
/// when everything in flight between them has arrived.
final class Timeline {
    let loop: EventLoop
    let server: ServerUnderTest
    /// The driver serving the scenario's clients, if any.
    let driver: DriverLink?
    /// Real time instead of virtual (`--wall-clock`).
    let wallClock: Bool
    /// Wall-clock seconds a settle may take.
    let settleTimeout: Double

    init(loop: EventLoop, server: ServerUnderTest, driver: DriverLink?, wallClock: Bool, settleTimeout: Double) {
        self.loop = loop
        self.server = server
        self.driver = driver
        self.wallClock = wallClock
        self.settleTimeout = settleTimeout
    }

    /// Returns once every message sent by a client has reached the server and every
    /// message the server sent has reached its client, with nothing left to run.
    ///
    /// When server and clients share the loop, the loop's own ledger knows this. Across
    /// processes it is an exchange: the clients' counts (the harness's loop, the driver's
    /// `settle`) are compared with the server's (`POST /control/settle`) until they agree.
    func settle() throws(ScenarioError) {
        if server.isInProcess && driver == nil {
            loop.settle()
            return
        }
        let deadline = MonotonicTime.after(seconds: settleTimeout)
        var previous: [SocketCount]?
        var sameSince = MonotonicTime.now()
        while true {
            loop.settle()
            var clients = loop.clientSockets.counts
            var portless: [SocketCount]?
            if let driver {
                try driver.request("settle", doing: "settle")
                if driver.capabilities.sockets { clients += driver.sockets } else { portless = driver.sockets }
            }
            let serverSide = try server.sessionCounts()
            let now = MonotonicTime.now()
            if serverSide != previous { (previous, sameSince) = (serverSide, now) }
            if let portless {
                // A driver that cannot tell its sockets' ports: matched by totals, or else
                // once the server's counts have stayed the same for 20 ms.
                let unanswered = driver?.unansweredUpgrades ?? 0
                if Self.balanced(clients, portless: portless, unanswered: unanswered, serverSide)
                    || Self.quiet(serverSide, for: MonotonicTime.seconds(from: sameSince, to: now), unanswered: unanswered) {
                    return
                }
            } else if Self.balanced(clients, serverSide) {
                return
            }
            guard now < deadline else {
                throw ScenarioError("the clients and the server did not settle within \(settleTimeout) s\n"
                    + "  clients: \(clients + (portless ?? []))\n  server:  \(serverSide)")
            }
            loop.run(timeout: 0.001) { false }
        }
    }

    /// Whether each client socket is open and agrees with the server's side of it. A
    /// silent session (a silence fault) whose client has let go stays on the server's
    /// side alone, since nothing crosses to end it there: it is not waited for. A session
    /// whose client bytes are still crossing a latency has received fewer messages than
    /// the client sent: only an advance of the clock brings the rest. An upgrade the
    /// server holds unanswered is waited for by its client alone (its open deadline):
    /// that opening socket is settled, and a held upgrade its client gave up is ignored
    /// (the server stops listing it once the client's end reached it, so a later socket
    /// on the same port is not taken for it).
    static func balanced(_ clients: [SocketCount], _ server: [SocketCount]) -> Bool {
        let heldPorts = Set(server.filter(\.held).map(\.port))
        let clients = clients.filter { $0.isOpen || $0.port == 0 || !heldPorts.contains($0.port) }
        let ports = Set(clients.map(\.port))
        let server = server.filter { !$0.held && (!$0.silent || ports.contains($0.port)) }
        guard clients.count == server.count, clients.allSatisfy(\.isOpen) else { return false }
        var byPort: [Int: SocketCount] = [:]
        for session in server { byPort[session.port] = session }
        return clients.allSatisfy { client in
            byPort[client.port].map { server in
                server.sent == client.received
                    && (server.received == client.sent || server.receiving && server.received < client.sent)
            } ?? false
        }
    }

    /// For a driver that cannot tell its sockets' ports (a page): the harness's own clients
    /// agree with their sessions as in ``balanced(_:_:)``; the driver's open sockets are as
    /// many as the other sessions, and summed over them, each side has received what the
    /// other sent; and the server holds at least as many upgrades as the driver has
    /// unanswered. Counts only grow towards what the other side sent, so equal sums mean
    /// equal counts on every socket. A silent session or one under latency cannot be
    /// told apart this way: such a state settles by ``quiet(_:for:unanswered:)`` instead.
    static func balanced(_ clients: [SocketCount], portless: [SocketCount], unanswered: Int,
                         _ server: [SocketCount]) -> Bool {
        let ports = Set(clients.map(\.port))
        guard balanced(clients, server.filter { ports.contains($0.port) }) else { return false }
        let others = server.filter { !ports.contains($0.port) }
        let sessions = others.filter { !$0.held }
        guard unanswered <= others.count(where: \.held), portless.count == sessions.count, portless.allSatisfy(\.isOpen),
              !sessions.contains(where: { $0.silent || $0.receiving }) else { return false }
        func sum(_ counts: [SocketCount], _ field: KeyPath<SocketCount, Int>) -> Int { counts.reduce(0) { $0 + $1[keyPath: field] } }
        return sum(portless, \.sent) == sum(sessions, \.received) && sum(portless, \.received) == sum(sessions, \.sent)
    }

    /// The fallback for a driver without ports: the server's counts have stayed the same
    /// for 20 ms, and it holds at least as many upgrades as the driver has unanswered, so
    /// none of those is still on its way (a page's next attempt can wait in the browser
    /// until the one it abandoned has closed).
    static func quiet(_ server: [SocketCount], for seconds: Double, unanswered: Int) -> Bool {
        seconds >= 0.02 && unanswered <= server.count(where: \.held)
    }

    /// Turns of an advance that may stay at one instant (timers due at the same time
    /// firing in turn); more means a next deadline that does not move when its time comes.
    static let turnsWithoutProgress = 100

    /// `advance: N`: in virtual mode, from deadline to deadline up to the target, each
    /// time driver clocks first (without firing), then the server and the harness's loop,
    /// then the driver's timers, settling in between. A deadline that stays where it is
    /// for ``turnsWithoutProgress`` turns ends the run with an error that names its owner.
    /// In wall-clock mode, real time.
    func advance(milliseconds: Int64) throws(ScenarioError) {
        if wallClock {
            loop.run(timeout: Double(milliseconds) / 1000) { false }
            try settle()
            return
        }
        let target = loop.clock.now.advanced(by: milliseconds)
        try settle()
        var previous: Instant?
        var turnsAtOneInstant = 0
        while true {
            let next = [target, server.nextDeadline, driver?.nextDeadline].compactMap { $0 }.min()!
            turnsAtOneInstant = previous.map { next <= $0 } == true ? turnsAtOneInstant + 1 : 0
            guard turnsAtOneInstant < Self.turnsWithoutProgress else { throw stuck(at: next) }
            previous = next
            if let driver, driver.now < next {
                try driver.request("advance", [("to", .integer(next.milliseconds)), ("fire", false)],
                                   doing: "advance to \(seconds(next)) without firing")
            }
            try server.moveClock(to: next, settle: settle)
            try settle()
            if let driver, let due = driver.nextDeadline, due <= next {
                try driver.request("advance", [("to", .integer(next.milliseconds))], doing: "advance to \(seconds(next))")
                try settle()
            }
            if next >= target { return }
        }
    }

    /// The error for a next deadline that stayed at `next`: the driver's, or the server's.
    private func stuck(at next: Instant) -> ScenarioError {
        let owner = if let driver, let due = driver.nextDeadline, due <= next {
            "driver \(driver.channel.label) (\(driver.sdkDescription)) reported its next deadline at \(seconds(due))"
        } else {
            "the server's next deadline was at \(seconds(next))"
        }
        return ScenarioError("\(owner) for \(Self.turnsWithoutProgress) turns: the timers due then did not fire or were not "
            + "taken off its list, so the clock could not move on")
    }

    private var origin: Instant?

    /// Marks scenario time 0, for messages.
    func start() { origin = loop.clock.now }

    private func seconds(_ instant: Instant) -> String {
        "t = \(Double(instant.milliseconds - (origin ?? instant).milliseconds) / 1000) s"
    }
}
