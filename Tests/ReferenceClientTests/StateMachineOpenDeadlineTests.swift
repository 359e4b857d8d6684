import ChatProtocol
import Testing
@testable import ReferenceClient

/// reconnection.open-deadline: an attempt whose upgrade is never answered is abandoned at
/// `openTimeout` and the loop goes on (003, weak network: until a connection succeeds).
@Suite struct StateMachineOpenDeadlineTests {
    /// Connected, dropped, and the first retry's socket asked for.
    static func retrying(_ rig: inout Rig) -> [SDKAction] {
        rig.connectedAuto()
        _ = rig.closed(nil)
        return rig.fire(.backoff, afterMilliseconds: 50)
    }

    @Test func everyAttemptArmsTheOpenDeadline() {
        var rig = Rig()
        rig.showsOpenDeadline = true
        #expect(Self.retrying(&rig) == [.openSocket, .scheduleTimer(.openTimeout, afterMilliseconds: 10_000)])
    }

    @Test func anUnansweredUpgradeIsAbandonedAndTheLoopGoesOn() {
        var rig = Rig()
        rig.showsOpenDeadline = true
        _ = Self.retrying(&rig)
        #expect(rig.fire(.openTimeout, afterMilliseconds: 10_000)
                == [.dropSocket, .scheduleTimer(.backoff, afterMilliseconds: 250)])
        #expect(rig.machine.status == .connecting)
    }

    @Test func anAnsweredUpgradeHandsOverToTheLoginDeadline() {
        var rig = Rig()
        rig.showsOpenDeadline = true
        _ = Self.retrying(&rig)
        let opened = rig.opened()
        #expect(opened.first == .cancelTimer(.openTimeout))
        #expect(opened.last == .scheduleTimer(.pongTimeout, afterMilliseconds: 10_000))
        // A deadline that fires anyway (already on its way) changes nothing.
        #expect(rig.fire(.openTimeout) == [])
    }

    @Test func theDeadlineIsTheProfilesValue() {
        var profile = Fixtures.cometChat
        profile.openTimeout = 4
        var rig = Rig(profile)
        rig.showsOpenDeadline = true
        #expect(Self.retrying(&rig).contains(.scheduleTimer(.openTimeout, afterMilliseconds: 4_000)))
    }
}
