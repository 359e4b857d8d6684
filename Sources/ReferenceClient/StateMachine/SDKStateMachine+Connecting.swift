import ChatProtocol

/// Connection rounds, the reconnection loop and the heartbeat.
extension SDKStateMachine {
    /// Whether a lost or failed connection should be retried now: a logged-in (or
    /// logging-in) user, not disconnected on purpose, not kicked, app not in the background.
    var shouldReconnect: Bool {
        guard settings != nil, let session, !stayOffline, !app.isBackground else { return false }
        if case .kicked = phase { return false }
        return session.confirmed || profile.retryLoginUntilAnswered
    }

    /// Starts a round from the first backoff step, for the calls `waiting` on it: an
    /// attempt now, or a pause when there is no network.
    mutating func startRound(reconnect: Bool, waiting: [Waiter] = []) {
        cancelTimer(.backoff)
        attempt(reconnect: reconnect, Round(waiters: waiting))
    }

    /// Opens a socket for the next attempt, or pauses the loop when there is no network.
    mutating func attempt(reconnect: Bool, _ round: Round) {
        if network == .down {
            enter(.paused(round))
        } else {
            emit(.openSocket)
            schedule(.openTimeout, seconds: profile.openTimeout)
            enter(.opening(reconnect: reconnect, round))
        }
    }

    /// Arms the backoff timer for the next attempt, or pauses without a network.
    mutating func scheduleRetry(_ round: Round) {
        guard network != .down else {
            cancelTimer(.backoff)
            enter(.paused(round))
            return
        }
        schedule(.backoff, milliseconds: profile.reconnectBackoff.delayMilliseconds(afterFailures: round.failures))
        var next = round
        next.failures += 1
        enter(.backingOff(next))
    }

    /// The socket of an attempt failed before the server answered the login.
    mutating func attemptFailed(_ error: ChatError) {
        cite("reconnection.failed-attempt-counts", "connection.failed-connect-not-retried", "connection.login-unreachable-fails")
        cancelTimer(.openTimeout)
        cancelTimer(.pongTimeout)
        let round = phase.round ?? Round()
        let onlyLogins = round.waiters.allSatisfy(\.isLogin)
        if shouldReconnect, round.waiters.isEmpty || (onlyLogins && profile.retryLoginUntilAnswered) {
            scheduleRetry(round)
        } else {
            endRound(failing: error)
        }
    }

    /// Ends the round: no retry, waiting calls fail, an unconfirmed login is dropped.
    mutating func endRound(failing error: ChatError) {
        cancelTimer(.backoff)
        cancelTimer(.openTimeout)
        cancelTimer(.pongTimeout)
        if session?.confirmed == false { session = nil }
        leaveRound(for: phase.isKicked ? phase : .idle, failing: error)
    }

    /// Moves to `next`, leaving the round in progress, if any: the calls that waited on
    /// it fail with `error`, after the status change.
    mutating func leaveRound(for next: Phase, failing error: ChatError) {
        let waiting = phase.round?.waiters ?? []
        enter(next)
        fail(waiting, error)
    }

    /// The server accepted the login.
    mutating func loginAccepted(_ result: JSONObject) {
        cite("reconnection.reset-after-success", "connection.login-result-user", "devices.reconnect-flag")
        guard let user = result["user"].flatMap(User.init(json:)) else {
            loginRejected(SDKError.malformedReply)
            return
        }
        cancelTimer(.pongTimeout)
        let waiting = phase.round?.waiters ?? []
        session?.user = user
        session?.confirmed = true
        stayOffline = false
        enter(.connected(app.keepsHeartbeat ? .running(awaiting: nil) : .stopped))
        if app.keepsHeartbeat { schedule(.keepAlive, seconds: profile.keepAliveInterval) }
        for waiter in waiting {
            switch waiter {
            case .login(let call): complete(call, .success(.user(user)))
            case .connect(let call): complete(call, .success(.none))
            }
        }
    }

    /// The server refused the login: the loop ends with a connection error (003 tip).
    mutating func loginRejected(_ error: ChatError) {
        cite("reconnection.refused-login-ends-loop", "reconnection.error-ends-loop")
        cancelTimer(.pongTimeout)
        cancelTimer(.backoff)
        if session?.confirmed == false { session = nil }
        emit(.connectionEvent(listeners: connectionListeners, .error(error)))
        leaveRound(for: .idle, failing: error)
    }

    /// An established connection went away without being asked to.
    mutating func connectionLost(_ error: ChatError) {
        cite("transport.drop-reconnects", "reconnection.without-app-action", "reconnection.no-error-event-on-transport-failure")
        stopHeartbeat()
        failPending(error)
        enter(.idle)
        if shouldReconnect { scheduleRetry(Round()) }
    }

    /// `device.kicked` or close 4001: no reconnection (003, "Reconnection kick strategy").
    mutating func kicked(reason: String) {
        cite("devices.one-mobile", "reconnection.kick-ends-loop", "calls.kick-fails-waiting-calls")
        if case .loggingOut(_, let call) = phase {
            finishLogout(call, closeSocket: false)
            return
        }
        stopHeartbeat()
        cancelTimer(.backoff)
        let error = ChatError(.webSocketError, "Another device took over: \(reason)")
        failPending(error)
        leaveRound(for: .kicked(reason: reason), failing: error)
    }

    /// Completes a logout: the session is cleared and the socket closed.
    mutating func finishLogout(_ call: CallID?, closeSocket: Bool) {
        cancelTimer(.pongTimeout)
        if closeSocket { self.closeSocket(profile.logoutCloseCode, rule: "codes.logout-close-code") }
        failPending(ChatError(.notLoggedIn, "The user logged out"))
        session = nil
        cursors = [:]
        usersRequests = [:]
        stayOffline = false
        enter(.idle)
        complete(call, .success(.none))
    }

    /// Closes what the background policy no longer allows and stops the loop.
    mutating func suspendConnection() {
        cite("background.close-code")
        let error = ChatError(.webSocketError, "The app went to the background")
        if case .loggingOut(_, let call) = phase {
            finishLogout(call, closeSocket: true)
            return
        }
        if phase.hasSocket { closeSocket(profile.backgroundCloseCode, rule: "background.close-code") }
        stopHeartbeat()
        cancelTimer(.backoff)
        failPending(error)
        if session?.confirmed == false { session = nil }
        leaveRound(for: phase.isKicked ? phase : .idle, failing: error)
    }

    /// Stops a reconnection loop that is waiting (backoff or network), as in the background.
    mutating func stopWaitingLoop(_ error: ChatError) {
        switch phase {
        case .backingOff, .paused:
            cancelTimer(.backoff)
            if session?.confirmed == false { session = nil }
            leaveRound(for: .idle, failing: error)
        default:
            break
        }
    }

    /// Fails the calls waiting on the round in progress; the round goes on without them.
    mutating func failWaiters(_ error: ChatError) {
        let waiting = phase.round?.waiters ?? []
        phase.round?.waiters = []
        fail(waiting, error)
    }

    mutating func fail(_ waiting: [Waiter], _ error: ChatError) {
        for waiter in waiting {
            switch waiter {
            case .login(let call), .connect(let call): complete(call, .failure(error))
            }
        }
    }

    /// Fails every unanswered request in the order sent.
    mutating func failPending(_ error: ChatError) {
        let done = pending
        pending = []
        cancelTimer(.callTimeout)
        for entry in done {
            switch entry.request {
            case .heartbeat: break
            case .ping(let call), .getUser(let call), .listUsers(let call, _): complete(call, .failure(error))
            }
        }
    }

    // MARK: Heartbeat

    /// Sends a heartbeat ping and arms its reply deadline (connected phase only).
    mutating func sendHeartbeat() {
        let id = send(.ping)
        pending.append((id, .heartbeat, nil))
        phase = .connected(.running(awaiting: id))
        schedule(.pongTimeout, seconds: profile.pongTimeout)
    }

    /// Restarts the heartbeat with a ping right away (the server may be close to its timeout).
    mutating func resumeHeartbeat() {
        guard phase == .connected(.stopped) else { return }
        sendHeartbeat()
    }

    mutating func stopHeartbeat() {
        if phase.isConnected { phase = .connected(.stopped) }
        cancelTimer(.keepAlive)
        cancelTimer(.pongTimeout)
    }

    /// A heartbeat ping was answered.
    mutating func heartbeatAnswered(_ id: RequestID) {
        guard phase == .connected(.running(awaiting: id)) else { return }
        phase = .connected(.running(awaiting: nil))
        cancelTimer(.pongTimeout)
        schedule(.keepAlive, seconds: profile.keepAliveInterval)
    }
}
