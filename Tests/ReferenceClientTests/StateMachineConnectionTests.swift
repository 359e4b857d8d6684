import ChatProtocol
import EventLoop
import Testing
@testable import ReferenceClient

/// Login, logout, connect and disconnect in both modes, with the exact actions.
@Suite struct StateMachineConnectionTests {
    @Test func autoModeLoginOpensTheSocketLogsInAndStartsTheHeartbeat() {
        var rig = Rig()
        let (initCall, initActions) = rig.call(.initialize(AppSettings()))
        #expect(initActions == [.completeCall(initCall, .success(.none))])

        let (login, loginActions) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(loginActions == [.openSocket, .event(.connecting)])
        #expect(rig.machine.status == .connecting)

        #expect(rig.opened() == [.send(.integer(1), Rig.loginRequest()), .scheduleTimer(.pongTimeout, afterMilliseconds: 10_000)])

        let reply = rig.receive(.loggedIn(id: .integer(1), user: Rig.alice, connectionId: "c1", serverTime: 1))
        #expect(reply == [
            .cancelTimer(.pongTimeout), .event(.connected),
            .scheduleTimer(.keepAlive, afterMilliseconds: 10_000), .completeCall(login, .success(.user(Rig.alice))),
        ])
        #expect(rig.machine.status == .connected)
        #expect(rig.machine.loggedInUser == Rig.alice)
    }

    @Test func heartbeatPingsAndWaitsForThePong() {
        var rig = Rig()
        rig.connectedAuto()
        #expect(rig.fire(.keepAlive, afterMilliseconds: 10_000)
            == [.send(.integer(2), .ping), .scheduleTimer(.pongTimeout, afterMilliseconds: 10_000)])
        #expect(rig.receive(.pong(id: .integer(2), serverTime: 1))
            == [.cancelTimer(.pongTimeout), .scheduleTimer(.keepAlive, afterMilliseconds: 10_000)])
    }

    @Test func logoutSendsLogoutThenClosesAndForgetsTheUser() {
        var rig = Rig()
        rig.connectedAuto()
        let (logout, actions) = rig.call(.logout)
        #expect(actions == [.cancelTimer(.keepAlive), .send(.integer(2), .logout),
                            .scheduleTimer(.pongTimeout, afterMilliseconds: 10_000)])
        #expect(rig.receive(.result(id: .integer(2), JSONObject())) == [
            .cancelTimer(.pongTimeout), .closeSocket(.normal), .event(.disconnected), .completeCall(logout, .success(.none)),
        ])
        #expect(rig.machine.loggedInUser == nil)
        #expect(rig.closed(1000) == [])
        let (again, second) = rig.call(.logout)
        #expect(second == [.completeCall(again, .failure(ChatError(.notLoggedIn)))])
    }

    @Test(arguments: [ErrorCode.uidNotFound, .authFailed, .userDeactivated])
    func refusedLoginFailsTheCallAndDoesNotRetry(code: ErrorCode) {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings()))
        let (login, _) = rig.call(.login(uid: "alice", authKey: "key"))
        _ = rig.opened()
        let error = ChatError(code)
        #expect(rig.receive(.error(id: .integer(1), error)) == [
            .cancelTimer(.pongTimeout), .event(.error(error)), .event(.disconnected), .completeCall(login, .failure(error)),
        ])
        #expect(rig.machine.loggedInUser == nil)
        #expect(rig.closed(CloseCode.loginFailed.rawValue) == [])
        #expect(rig.machine.status == .disconnected)
    }

    @Test func callsBeforeInitializeAreRefused() {
        var rig = Rig()
        let (login, actions) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(actions == [.completeCall(login, .failure(ChatError(code: "ERR_NOT_INITIALIZED", description: "initialize() has not been called")))])
    }

    @Test func manualModeLoginOnlyRecordsTheUser() {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings(autoEstablishSocketConnection: false)))
        let (connectFirst, early) = rig.call(.connect)
        #expect(early == [.completeCall(connectFirst, .failure(ChatError(.notLoggedIn)))])

        let (login, actions) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(actions == [.completeCall(login, .success(.none))])
        #expect(rig.machine.loggedInUser == User(uid: "alice"))
        #expect(rig.machine.status == .disconnected)

        let (connect, connecting) = rig.call(.connect)
        #expect(connecting == [.openSocket, .event(.connecting)])
        #expect(rig.opened().first == .send(.integer(1), Rig.loginRequest()))
        let reply = rig.receive(.loggedIn(id: .integer(1), user: Rig.alice, connectionId: "c1", serverTime: 1))
        #expect(reply.last == .completeCall(connect, .success(.none)))
        #expect(rig.machine.loggedInUser == Rig.alice)

        let (again, second) = rig.call(.connect)
        #expect(second == [.completeCall(again, .failure(ChatError(.alreadyConnected)))])
    }

    @Test func manualConnectWithoutNetworkIsErrNoInternet() {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings(autoEstablishSocketConnection: false)))
        _ = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(rig.env(.network(.down)) == [])
        let (connect, actions) = rig.call(.connect)
        #expect(actions == [.completeCall(connect, .failure(ChatError(.noInternet)))])
    }

    @Test func manualConnectToAnUnreachableServerIsErrWebsocketErrorWithoutRetry() {
        var rig = Rig()
        _ = rig.call(.initialize(AppSettings(autoEstablishSocketConnection: false)))
        _ = rig.call(.login(uid: "alice", authKey: "key"))
        let (connect, _) = rig.call(.connect)
        let actions = rig.failed("ECONNREFUSED")
        #expect(actions == [.event(.disconnected), .completeCall(connect, .failure(ChatError(.webSocketError, "ECONNREFUSED")))])
        #expect(Rig.backoffDelay(actions) == nil)
    }

    @Test func pingIsRefusedInAutoModeAndWithoutLogin() {
        var auto = Rig()
        auto.connectedAuto()
        let (ping, refused) = auto.call(.ping)
        #expect(refused == [.completeCall(ping, .failure(ChatError(.pingNotAvailable)))])

        var manual = Rig()
        _ = manual.call(.initialize(AppSettings(autoEstablishSocketConnection: false)))
        let (early, notLoggedIn) = manual.call(.ping)
        #expect(notLoggedIn == [.completeCall(early, .failure(ChatError(.notLoggedIn)))])
    }

    @Test func manualPingIsSentAndCompletesOnTheReply() {
        var rig = Rig()
        rig.connectedManual()
        let (ping, actions) = rig.call(.ping)
        #expect(actions == [.send(.integer(2), .ping)])
        #expect(rig.receive(.pong(id: .integer(2), serverTime: 1)) == [.completeCall(ping, .success(.none))])
    }

    @Test func disconnectClosesFailsPendingCallsAndStaysOffline() {
        var rig = Rig()
        rig.connectedAuto()
        let (lookup, _) = rig.call(.getUser(uid: "bob"))
        let (disconnect, actions) = rig.call(.disconnect)
        #expect(actions == [
            .closeSocket(.normal), .cancelTimer(.keepAlive),
            .completeCall(lookup, .failure(ChatError(.webSocketError, "disconnect() was called"))),
            .event(.disconnected), .completeCall(disconnect, .success(.none)),
        ])
        // Auto mode does not undo an explicit disconnect on the next foreground.
        _ = rig.env(.didBackground)
        #expect(rig.env(.foreground) == [])
        let (_, reconnect) = rig.call(.connect)
        #expect(reconnect == [.openSocket, .event(.connecting)])
    }

    @Test func connectionListenersReceiveEvents() {
        var rig = Rig()
        _ = rig.call(.addConnectionListener("screen"))
        _ = rig.call(.initialize(AppSettings()))
        let (_, actions) = rig.call(.login(uid: "alice", authKey: "key"))
        #expect(actions == [.openSocket, .event(.connecting, ["screen"])])
        _ = rig.call(.removeConnectionListener("screen"))
        #expect(rig.failed() == [.event(.disconnected, []), .completeCall(CallID(3), .failure(ChatError(.webSocketError, "refused")))])
    }

    @Test func relaunchKeepsTheUserAndInitializeReconnectsInAutoMode() {
        var rig = Rig()
        rig.connectedAuto()
        #expect(rig.env(.relaunch) == [.dropSocket, .cancelTimer(.keepAlive)])
        #expect(rig.machine.loggedInUser == Rig.alice)
        #expect(!rig.machine.isInitialized)
        #expect(rig.machine.status == .disconnected)

        let (initCall, actions) = rig.call(.initialize(AppSettings()))
        #expect(actions == [.completeCall(initCall, .success(.none)), .openSocket, .event(.connecting)])
        #expect(rig.opened().first == .send(.integer(1), Rig.loginRequest(reconnect: false)))
    }

    @Test func relaunchInManualModeWaitsForConnect() {
        var rig = Rig()
        rig.connectedManual()
        _ = rig.env(.relaunch)
        let (initCall, actions) = rig.call(.initialize(AppSettings(autoEstablishSocketConnection: false)))
        #expect(actions == [.completeCall(initCall, .success(.none))])
        let (_, connect) = rig.call(.connect)
        #expect(connect == [.openSocket, .event(.connecting)])
    }

    @Test func statusAndBackgroundFlagAreAnsweredAsCalls() {
        var rig = Rig()
        rig.connectedAuto()
        let (status, statusActions) = rig.call(.getConnectionStatus)
        #expect(statusActions == [.completeCall(status, .success(.status(.connected)))])
        let (flag, flagActions) = rig.call(.backgroundTaskEnabled)
        #expect(flagActions == [.completeCall(flag, .success(.flag(false)))])
        let (user, userActions) = rig.call(.getLoggedInUser)
        #expect(userActions == [.completeCall(user, .success(.user(Rig.alice)))])
    }
}
