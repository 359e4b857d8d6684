import ChatProtocol
import EventLoop

/// Faults on a connection's whole TCP path (docs/PROTOCOL.md, 12.7, "Latency", "Slow
/// close"), carried out by its `TCPConnection` and `WebSocket`, and the `upgrade`
/// fault counted per device at login.
extension ChatServer {
    /// Sets (or removes) a latency.
    func setLatency(_ ms: Int64?, for selector: FaultPlan.Selector) {
        faults.latencies.removeAll { $0.selector == selector }
        if let ms { faults.latencies.append(LatencyRule(selector: selector, ms: ms)) }
        if faults.latencyOfNewConnections == nil { releaseLatencyHeldUpgrades() }
        refreshPathFaults()
    }

    /// Sets (or removes) a slow close.
    func setSlowClose(_ delays: WebSocket.CloseDelays?, for selector: FaultPlan.Selector) {
        faults.slowCloses.removeAll { $0.selector == selector }
        if let delays { faults.slowCloses.append(SlowCloseRule(selector: selector, delays: delays)) }
        refreshPathFaults()
    }

    /// Gives every open connection the latency and close delays the plan has for it.
    func refreshPathFaults() {
        socketIDs.forEach(refreshPathFaults)
    }

    /// Gives one connection the latency and close delays the plan has for it (on a
    /// change, and at its upgrade and login).
    func refreshPathFaults(_ id: ConnectionID) {
        guard let socket = socket(id), !stalled.contains(id) else { return }
        let label = loggedInLabel(id)
        let latency = faults.latency(uid: label?.uid, deviceId: label?.deviceId)
        let delays = faults.closeDelays(uid: label?.uid, deviceId: label?.deviceId)
        if socket.connection.latencyMs != latency {
            let traced = tracedLabel(id)
            trace.record(.fault, time: loop.clock.now, connection: id, uid: traced?.uid, deviceId: traced?.deviceId,
                         text: latency.map { "latency: every byte \($0) ms late each way" } ?? "latency: off, what it held crosses now")
            socket.connection.latencyMs = latency
        }
        if socket.closeDelays != delays {
            socket.closeDelays = delays
            socket.onCloseDelayed = delays == nil ? nil : { [unowned self] what in
                let traced = self.tracedLabel(id)
                self.trace.record(.fault, time: self.loop.clock.now, connection: id, uid: traced?.uid,
                                  deviceId: traced?.deviceId, text: "slow close: " + what)
            }
        }
    }

    /// The routing of a new upgrade under a latency of every connection: the request
    /// arrives `ms` late, and the answer, whatever it is, leaves `ms` late.
    func upgradeDelayedByLatency() -> WebServer.Routing? {
        guard !isRoutingAfterLatency, let ms = faults.latencyOfNewConnections else { return nil }
        return .hold { [unowned self] request in
            let number = nextLatencyHold
            nextLatencyHold += 1
            let timer = loop.clock.schedule(after: ms) { [weak self] in self?.routeAfterLatency(number) }
            latencyHeldUpgrades[number] = (timer, request)
            trace.record(.fault, time: loop.clock.now, text: "latency: upgrade request arrives in \(ms) ms")
        }
    }

    private func routeAfterLatency(_ number: Int) {
        guard let (timer, request) = latencyHeldUpgrades.removeValue(forKey: number) else { return }
        loop.clock.cancel(timer)
        request.setLatency(faults.latencyOfNewConnections)
        isRoutingAfterLatency = true
        request.reroute()
        isRoutingAfterLatency = false
    }

    /// Upgrades a latency holds arrive at once (the latency was removed).
    func releaseLatencyHeldUpgrades() {
        latencyHeldUpgrades.keys.sorted().forEach(routeAfterLatency)
    }

    /// Whether a login is taken by an `upgrade` fault counted per device: its
    /// connection is reset, or goes silent with the login held (`answer: never`).
    func refusedAtLogin(_ frame: inout InboundFrame, from id: ConnectionID) -> Bool {
        guard loggedInLabel(id) == nil, let login = frame.login() else { return false }
        let uid = login["uid"]?.stringValue, deviceId = login["deviceId"]?.stringValue
        guard let index = faults.loginUpgrades.lastIndex(where: { $0.selector.matches(uid: uid, deviceId: deviceId) }) else {
            return false
        }
        var fault = faults.loginUpgrades[index]
        let taken = fault.takes()
        if fault.isSpent { faults.loginUpgrades.remove(at: index) } else { faults.loginUpgrades[index] = fault }
        guard taken else { return false }
        // Read, and not answered: a replay of the recording sends it again.
        trace.record(.in, time: loop.clock.now, connection: id, uid: uid, deviceId: deviceId, frame: login)
        trace.record(.fault, time: loop.clock.now, connection: id, uid: uid, deviceId: deviceId,
                     text: "upgrade: login attempt \(fault.attemptsSeen) of \(uid ?? "?")/\(deviceId ?? "?") \(fault.describe)")
        switch fault.answer {
        case .never:
            silenceConnection(id)
            return heldBySilence(&frame, from: id)
        default:
            socket(id)?.drop(reset: true)
            return true
        }
    }

    /// Sets or clears an `upgrade` fault counted per device (one per selector).
    func setLoginUpgrade(_ fault: UpgradeFault?, for selector: FaultPlan.Selector) {
        faults.loginUpgrades.removeAll { $0.selector == selector }
        if let fault { faults.loginUpgrades.append(fault) }
    }
}
