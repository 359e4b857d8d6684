import ChatProtocol
import EventLoop

/// The `upgrade` fault's side of routing (docs/PROTOCOL.md, 12.7, "Upgrades").
extension ChatServer {
    /// Sets or clears the fault; upgrades it left unanswered are reset.
    func setUpgradeFault(_ fault: UpgradeFault?) {
        faults.upgrade = fault
        resetUnansweredUpgrades()
    }

    /// How a new upgrade is answered under the fault; nil when it goes through.
    func upgradeFaultRouting() -> WebServer.Routing? {
        guard var fault = faults.upgrade else { return nil }
        let taken = fault.takes()
        faults.upgrade = fault.isSpent ? nil : fault
        guard taken else { return nil }
        trace.record(.fault, time: loop.clock.now, text: "upgrade: attempt \(fault.attemptsSeen) \(fault.describe)")
        switch fault.answer {
        case .status: return fault.response.map { .respond($0) }
        case .reset: return .drop
        case .never: return .hold { [unowned self] request in self.unansweredUpgrades.append(request) }
        }
    }

    /// Resets the upgrades the fault never answered (the fault was cleared or replaced).
    func resetUnansweredUpgrades() {
        let held = unansweredUpgrades
        unansweredUpgrades = []
        held.forEach { $0.reset() }
    }
}
