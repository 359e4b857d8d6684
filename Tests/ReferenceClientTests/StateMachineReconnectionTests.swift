import ChatProtocol
import EventLoop
import Testing
@testable import ReferenceClient

/// The reconnection loop of 003: schedule, resets, pause, stop, weak network, kicks.
@Suite struct StateMachineReconnectionTests {
    /// Connected, then the connection drops; returns the actions of the drop.
    static func dropped(_ rig: inout Rig, settings: AppSettings = AppSettings()) -> [SDKAction] {
        rig.connectedAuto(settings)
        return rig.closed(nil)
    }

    @Test func lostConnectionRetriesOnTheDocumentedSchedule() {
        var rig = Rig()
        let drop = Self.dropped(&rig)
        #expect(drop == [.cancelTimer(.keepAlive), .event(.disconnected),
                         .scheduleTimer(.backoff, afterMilliseconds: 50), .event(.connecting)])
        var delays = [Rig.backoffDelay(drop)]
        for _ in 0..<10 {
            let delay = delays.last!! // the timer that is armed now
            #expect(rig.fire(.backoff, afterMilliseconds: delay) == [.openSocket])
            let failure = rig.failed()
            #expect(failure.count == 1)
            delays.append(Rig.backoffDelay(failure))
        }
        #expect(delays == [50, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 64_000])
        #expect(rig.machine.status == .connecting)
    }

    @Test func aSuccessfulReconnectStartsTheScheduleAgain() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        _ = rig.fire(.backoff)
        _ = rig.failed()
        _ = rig.fire(.backoff)
        _ = rig.opened()
        _ = rig.receive(.loggedIn(id: .integer(2), user: Rig.alice, connectionId: "c2", serverTime: 1))
        #expect(rig.machine.status == .connected)
        #expect(Rig.backoffDelay(rig.closed(nil)) == 50)
    }

    @Test func reconnectAttemptsSendTheReconnectFlagAndKickSetting() {
        var rig = Rig()
        let settings = AppSettings(reconnectKickEnable: true)
        _ = Self.dropped(&rig, settings: settings)
        _ = rig.fire(.backoff)
        #expect(rig.opened() == [
            .send(.integer(2), Rig.loginRequest(settings: settings, reconnect: true, kickEnable: true)),
            .scheduleTimer(.pongTimeout, afterMilliseconds: 10_000),
        ])
    }

    @Test func theProfileDefaultAppliesWhenSettingsLeaveTheKickFlagOpen() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        _ = rig.fire(.backoff)
        #expect(rig.opened().first == .send(.integer(2), Rig.loginRequest(reconnect: true, kickEnable: false)))
    }

    @Test func networkChangeRestartsTheSchedule() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        for _ in 0..<4 {
            _ = rig.fire(.backoff)
            _ = rig.failed()
        }
        #expect(rig.env(.network(.weak)) == [.scheduleTimer(.backoff, afterMilliseconds: 50)])
    }

    @Test func foregroundRestartsTheLoopFromTheFirstStep() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        for _ in 0..<5 {
            _ = rig.fire(.backoff)
            _ = rig.failed()
        }
        #expect(rig.env(.didBackground) == [.cancelTimer(.backoff), .event(.disconnected)])
        #expect(rig.env(.foreground) == [.openSocket, .event(.connecting)])
        #expect(rig.failed() == [.scheduleTimer(.backoff, afterMilliseconds: 50)])
    }

    @Test func noNetworkPausesTheLoopUntilItReturns() {
        var rig = Rig()
        rig.connectedAuto()
        #expect(rig.env(.network(.down)) == [.dropSocket, .cancelTimer(.keepAlive), .event(.disconnected)])
        #expect(rig.machine.status == .disconnected)
        #expect(rig.env(.network(.up)) == [.scheduleTimer(.backoff, afterMilliseconds: 50), .event(.connecting)])
        #expect(rig.env(.network(.down)) == [.cancelTimer(.backoff), .event(.disconnected)])
        #expect(rig.env(.network(.up)) == [.scheduleTimer(.backoff, afterMilliseconds: 50), .event(.connecting)])
    }

    @Test func networkLossDuringAnAttemptPausesTheLoop() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        _ = rig.fire(.backoff)
        _ = rig.opened()
        #expect(rig.env(.network(.down)) == [.dropSocket, .cancelTimer(.pongTimeout), .event(.disconnected)])
    }

    @Test func disconnectStopsTheLoop() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        let (call, actions) = rig.call(.disconnect)
        #expect(actions == [.cancelTimer(.backoff), .event(.disconnected), .completeCall(call, .success(.none))])
        #expect(rig.env(.network(.weak)) == [])
        #expect(rig.fire(.backoff) == [])
    }

    @Test func manualModeReconnectsAfterAForegroundNetworkLoss() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.env(.network(.down))
        #expect(rig.env(.network(.up)) == [.scheduleTimer(.backoff, afterMilliseconds: 50), .event(.connecting)])
        #expect(rig.fire(.backoff) == [.openSocket])
    }

    @Test func lostPongOnAWeakNetworkTriggersReconnection() {
        var rig = Rig()
        rig.connectedAuto()
        #expect(rig.env(.network(.weak)) == [])
        _ = rig.fire(.keepAlive, afterMilliseconds: 10_000)
        #expect(rig.fire(.pongTimeout, afterMilliseconds: 10_000) == [
            .dropSocket, .event(.disconnected), .scheduleTimer(.backoff, afterMilliseconds: 50), .event(.connecting),
        ])
        // The login reply of the next attempt is lost too: the loop goes on.
        _ = rig.fire(.backoff)
        _ = rig.opened()
        #expect(rig.fire(.pongTimeout, afterMilliseconds: 10_000)
            == [.dropSocket, .scheduleTimer(.backoff, afterMilliseconds: 250)])
    }

    @Test func refusedReconnectEndsTheLoopWithAConnectionError() {
        var rig = Rig()
        _ = Self.dropped(&rig, settings: AppSettings(reconnectKickEnable: true))
        _ = rig.fire(.backoff)
        _ = rig.opened()
        let error = ChatError(.reconnectKickRefused)
        #expect(rig.receive(.error(id: .integer(2), error))
            == [.cancelTimer(.pongTimeout), .event(.error(error)), .event(.disconnected)])
        #expect(rig.closed(CloseCode.reconnectRefused.rawValue) == [])
        #expect(rig.env(.network(.weak)) == [])
        #expect(rig.machine.status == .disconnected)
    }

    @Test func refusalCloseCodeAloneAlsoEndsTheLoop() {
        var rig = Rig()
        _ = Self.dropped(&rig)
        _ = rig.fire(.backoff)
        _ = rig.opened()
        let error = ChatError(.reconnectKickRefused)
        #expect(rig.closed(CloseCode.reconnectRefused.rawValue)
            == [.cancelTimer(.pongTimeout), .event(.error(error)), .event(.disconnected)])
    }

    @Test func deviceKickMakesTheStatusKickedAndNothingReconnects() {
        var rig = Rig()
        rig.connectedAuto()
        let kick = rig.receive(.deviceKicked(reason: "signed in on another phone", byDeviceId: "d2", byPlatform: .mobile))
        #expect(kick == [.cancelTimer(.keepAlive), .event(.kicked(reason: "signed in on another phone"))])
        #expect(rig.machine.status == .kicked)
        #expect(rig.closed(CloseCode.deviceKicked.rawValue) == [])
        #expect(rig.env(.network(.down)) == [])
        #expect(rig.env(.network(.up)) == [])
        _ = rig.env(.didBackground)
        #expect(rig.env(.foreground) == [])
        #expect(rig.machine.status == .kicked)
        // The app may take the session back on purpose.
        let (_, connect) = rig.call(.connect)
        #expect(connect == [.openSocket, .event(.connecting)])
        #expect(rig.opened().first == .send(.integer(2), Rig.loginRequest(reconnect: false)))
    }

    @Test func closeCode4001AloneCountsAsAKick() {
        var rig = Rig()
        rig.connectedAuto()
        #expect(rig.closed(CloseCode.deviceKicked.rawValue)
            == [.cancelTimer(.keepAlive), .event(.kicked(reason: "closed with 4001"))])
    }
}
