import ChatProtocol
import EventLoop
import Testing
@testable import ReferenceClient

/// Background behaviour: 000 (auto and manual mode), 002 (background services), 003 (Nexconn).
@Suite struct StateMachineBackgroundTests {
    static let manual = AppSettings(autoEstablishSocketConnection: false)

    @Test func autoModeClosesAtOnceInTheBackgroundAndReconnectsInTheForeground() {
        var rig = Rig()
        rig.connectedAuto()
        #expect(rig.env(.willResignActive) == [])
        #expect(rig.env(.didBackground) == [.closeSocket(.goingAway), .cancelTimer(.keepAlive), .event(.disconnected)])
        #expect(!rig.machine.backgroundTaskEnabled)
        #expect(rig.env(.foreground) == [.openSocket, .event(.connecting)])
        #expect(rig.opened().first == .send(.integer(2), Rig.loginRequest(reconnect: true)))
    }

    @Test func backgroundServicesKeepTheSocketForTheTaskWindowThenClose() {
        var rig = Rig()
        rig.connectedAuto()
        let (configure, configured) = rig.call(.configureServices(.willResignActive))
        #expect(configured == [.completeCall(configure, .success(.none))])
        _ = rig.env(.willResignActive)
        #expect(rig.env(.didBackground) == [.scheduleTimer(.backgroundWindow, afterMilliseconds: 30_000)])
        #expect(rig.machine.backgroundTaskEnabled)
        #expect(rig.machine.status == .connected)
        // The heartbeat keeps running while the task lives.
        #expect(rig.fire(.keepAlive, afterMilliseconds: 10_000).first == .send(.integer(2), .ping))
        _ = rig.receive(.pong(id: .integer(2), serverTime: 1))
        #expect(rig.fire(.backgroundWindow, afterMilliseconds: 20_000)
            == [.closeSocket(.goingAway), .cancelTimer(.keepAlive), .event(.disconnected)])
        #expect(!rig.machine.backgroundTaskEnabled)
        #expect(rig.env(.foreground) == [.openSocket, .event(.connecting)])
        #expect(!rig.machine.backgroundTaskEnabled)
    }

    @Test func quickSwitchKeepsTheConnectionAndTheFlag() {
        var rig = Rig()
        rig.connectedAuto()
        _ = rig.call(.configureServices(.willResignActive))
        _ = rig.env(.didBackground)
        #expect(rig.env(.foreground) == [.cancelTimer(.backgroundWindow)])
        #expect(rig.machine.status == .connected)
        #expect(rig.machine.backgroundTaskEnabled)
    }

    @Test func configureServicesAfterEnteringTheBackgroundStartsTheTaskThen() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.env(.didBackground)
        let (call, actions) = rig.call(.configureServices(.didBackground))
        #expect(actions == [
            .scheduleTimer(.backgroundWindow, afterMilliseconds: 30_000),
            .send(.integer(3), .ping), .scheduleTimer(.pongTimeout, afterMilliseconds: 10_000),
            .completeCall(call, .success(.none)),
        ])
        #expect(rig.machine.backgroundTaskEnabled)
    }

    @Test func configureServicesAfterAutoModeClosedTheSocketDoesNotClaimATask() {
        var rig = Rig()
        rig.connectedAuto()
        _ = rig.env(.didBackground)
        #expect(rig.machine.status != .connected)
        let (call, actions) = rig.call(.configureServices(.didBackground))
        #expect(actions == [.completeCall(call, .success(.none))])
        // Never the task running with the socket closed.
        #expect(!rig.machine.backgroundTaskEnabled)
    }

    @Test func manualModeInTheBackgroundStopsTheHeartbeatAfterOneLastPing() {
        var rig = Rig()
        rig.connectedManual()
        #expect(rig.env(.didBackground) == [.cancelTimer(.keepAlive), .send(.integer(2), .ping)])
        #expect(rig.receive(.pong(id: .integer(2), serverTime: 1)) == [])
        // Nothing is armed: only the server's heartbeat timeout can end the socket.
        #expect(rig.machine.armedTimers.isEmpty)
        #expect(rig.machine.status == .connected)
    }

    @Test func manualModeSocketDroppedByTheServerInTheBackgroundIsNotReconnected() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.env(.didBackground)
        #expect(rig.closed(CloseCode.heartbeatTimeout.rawValue) == [.event(.disconnected)])
        #expect(rig.env(.foreground) == [])
        #expect(rig.machine.status == .disconnected)
        let (_, connect) = rig.call(.connect)
        #expect(connect == [.openSocket, .event(.connecting)])
    }

    @Test func manualModePingInTheBackgroundIsAnswered() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.env(.didBackground)
        let (ping, actions) = rig.call(.ping)
        #expect(actions == [.send(.integer(3), .ping)])
        #expect(rig.receive(.pong(id: .integer(3), serverTime: 1)) == [.completeCall(ping, .success(.none))])
    }

    @Test func manualModeWithServicesIsClosedWhenTheWindowEndsAndStaysClosed() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.call(.configureServices(.willResignActive))
        #expect(rig.env(.didBackground) == [.scheduleTimer(.backgroundWindow, afterMilliseconds: 30_000)])
        #expect(rig.fire(.backgroundWindow, afterMilliseconds: 30_000)
            == [.closeSocket(.goingAway), .cancelTimer(.keepAlive), .event(.disconnected)])
        #expect(rig.env(.foreground) == [])
    }

    @Test func manualModeDisconnectedBeforeTheBackgroundStaysDisconnected() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.call(.configureServices(.willResignActive))
        _ = rig.call(.disconnect)
        _ = rig.env(.didBackground)
        #expect(rig.fire(.backgroundWindow, afterMilliseconds: 30_000) == [])
        #expect(rig.env(.foreground) == [])
        #expect(rig.machine.status == .disconnected)
    }

    @Test func nexconnDisconnectsAfterTwoMinutesInTheBackgroundAndReconnectsOnReturn() {
        var rig = Rig(Fixtures.nexconn)
        rig.connectedAuto()
        #expect(rig.env(.didBackground) == [.scheduleTimer(.backgroundWindow, afterMilliseconds: 120_000)])
        #expect(!rig.machine.backgroundTaskEnabled)
        #expect(rig.fire(.keepAlive, afterMilliseconds: 10_000).first == .send(.integer(2), .ping))
        _ = rig.receive(.pong(id: .integer(2), serverTime: 1))
        #expect(rig.fire(.backgroundWindow, afterMilliseconds: 110_000)
            == [.closeSocket(.goingAway), .cancelTimer(.keepAlive), .event(.disconnected)])
        #expect(rig.env(.foreground) == [.openSocket, .event(.connecting)])
        #expect(rig.opened().first == .send(.integer(3), Rig.loginRequest(reconnect: true)))
    }

    @Test func nexconnReturnBeforeTwoMinutesKeepsTheConnection() {
        var rig = Rig(Fixtures.nexconn)
        rig.connectedAuto()
        _ = rig.env(.didBackground)
        #expect(rig.env(.foreground) == [.cancelTimer(.backgroundWindow)])
        #expect(rig.machine.status == .connected)
    }

    @Test func nexconnIgnoresConfigureServices() {
        var rig = Rig(Fixtures.nexconn)
        rig.connectedAuto()
        let (call, actions) = rig.call(.configureServices(.willResignActive))
        #expect(actions == [.completeCall(call, .success(.none))])
        #expect(rig.env(.didBackground) == [.scheduleTimer(.backgroundWindow, afterMilliseconds: 120_000)])
        #expect(!rig.machine.backgroundTaskEnabled)
    }

    @Test func nexconnLoginWithoutNetworkWaitsAndRetriesAsAReconnect() {
        var rig = Rig(Fixtures.nexconn)
        _ = rig.call(.initialize(AppSettings()))
        _ = rig.env(.network(.down))
        let (login, actions) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(actions == [])
        #expect(rig.machine.loggedInUser == nil)
        #expect(rig.env(.network(.up)) == [.scheduleTimer(.backoff, afterMilliseconds: 50), .event(.connecting)])
        _ = rig.fire(.backoff, afterMilliseconds: 50)
        #expect(rig.opened().first == .send(.integer(1), Rig.loginRequest(reconnect: true)))
        let reply = rig.receive(.loggedIn(id: .integer(1), user: Rig.alice, connectionId: "c1", serverTime: 1))
        #expect(reply.last == .completeCall(login, .success(.user(Rig.alice))))
    }

    @Test func nexconnLoginKeepsRetryingAnUnreachableServer() {
        var rig = Rig(Fixtures.nexconn)
        _ = rig.call(.initialize(AppSettings()))
        _ = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(rig.failed() == [.scheduleTimer(.backoff, afterMilliseconds: 50)])
    }

    @Test func cometChatLoginWithoutNetworkOrServerFailsAtOnce() {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings()))
        _ = rig.env(.network(.down))
        let (offline, actions) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(actions == [.completeCall(offline, .failure(ChatError(.noInternet)))])
        _ = rig.env(.network(.up))
        let (login, _) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(rig.failed("ECONNREFUSED")
            == [.event(.disconnected), .completeCall(login, .failure(ChatError(.webSocketError, "ECONNREFUSED")))])
        #expect(rig.machine.loggedInUser == nil)
    }
}
