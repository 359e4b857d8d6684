import ChatProtocol

/// App lifecycle, background services, network changes and relaunch.
extension SDKStateMachine {
    /// 002 "Step 3": the app calls this from its lifecycle handlers, which reach the SDK
    /// before the event they handle (the harness delivers them first; rule
    /// `background.services-handler-call`), so the task starts when the app enters the
    /// background, in auto mode too. A call made later, while already in the background,
    /// starts the task only when the socket is still open (manual mode, or a delayed
    /// close); when auto mode has already closed it, the configuration applies from the
    /// next background and `backgroundTaskEnabled()` stays false, so the task is never
    /// reported running with the socket closed.
    mutating func configureServices(_ state: ApplicationState, _ call: CallID?) {
        if let window = profile.backgroundTaskWindow {
            servicesConfigured = true
            if state == .didBackground, app.isBackground, app != .background(hold: .task), phase.isConnected {
                startBackgroundTask(window)
            }
        }
        complete(call, .success(.none))
    }

    mutating func willResignActive() {
        if app == .active { app = .inactive }
    }

    mutating func didBackground() {
        guard !app.isBackground else { return }
        app = .background(hold: nil)
        let error = ChatError(.webSocketError, "The app went to the background")
        // 002 "Return Values": true means real-time updates go on, so a task only starts
        // for a socket to keep (decision D28); without one the usual rules apply.
        if servicesConfigured, let window = profile.backgroundTaskWindow, phase.hasSocket {
            startBackgroundTask(window)
            return
        }
        backgroundTaskEnabled = false
        guard isAutoMode else {
            // Manual mode: the socket stays, but a suspended app sends nothing. One last
            // ping makes the server's timeout count from now (project choice).
            stopWaitingLoop(error)
            if phase.isConnected {
                stopHeartbeat()
                let id = send(.ping)
                pending.append((id, .heartbeat, nil))
            }
            return
        }
        switch profile.backgroundWithoutServices {
        case .disconnectAtOnce:
            suspendConnection()
        case .disconnectAfterDelay:
            stopWaitingLoop(error)
            if let delay = profile.backgroundDisconnectAfter {
                app = .background(hold: .delay)
                schedule(.backgroundWindow, seconds: delay)
            }
        }
    }

    /// 002: the background task keeps the socket and its heartbeat for `window` seconds.
    mutating func startBackgroundTask(_ window: Double) {
        app = .background(hold: .task)
        backgroundTaskEnabled = true
        schedule(.backgroundWindow, seconds: window)
        resumeHeartbeat()
    }

    /// The background task or the background delay ran out.
    mutating func backgroundWindowEnded() {
        guard case .background(let hold?) = app else { return }
        app = .background(hold: nil)
        if hold == .task { backgroundTaskEnabled = false }
        suspendConnection()
    }

    mutating func foreground() {
        let previous = app
        app = .active
        guard previous.isBackground else { return }
        if previous != .background(hold: nil) { cancelTimer(.backgroundWindow) }
        if profile.resetBackoffOnForeground { phase.round?.failures = 0 }
        switch phase {
        case .connected:
            resumeHeartbeat()
        case .backingOff(let round):
            if profile.resetBackoffOnForeground { scheduleRetry(round) }
        case .idle:
            // 000 "Default SDK behaviour": auto mode reconnects on return; manual mode
            // waits for connect() (000 "Reconnection"). A relaunched app waits for init().
            if isInitialized, isAutoMode, session?.confirmed == true, !stayOffline { startRound(reconnect: true) }
        case .opening, .authenticating, .loggingOut, .paused, .kicked:
            break
        }
    }

    mutating func networkChanged(to condition: NetworkCondition) {
        guard condition != network else { return }
        network = condition
        if profile.resetBackoffOnNetworkChange { phase.round?.failures = 0 }
        if condition == .down {
            networkLost()
            return
        }
        switch phase {
        case .paused(let round):
            if shouldReconnect { scheduleRetry(round) } else { endRound(failing: ChatError(.noInternet)) }
        case .backingOff(let round):
            if profile.resetBackoffOnNetworkChange { scheduleRetry(round) }
        default:
            break
        }
    }

    /// The OS reports a new network path while the network stays up (an interface
    /// change): a live connection is checked at once with a heartbeat ping, whose missing
    /// reply drops it, and a waiting loop starts again from the first wait.
    mutating func networkPathChanged() {
        guard network != .down else { return }
        if profile.resetBackoffOnNetworkChange { phase.round?.failures = 0 }
        switch phase {
        case .connected(.running(awaiting: nil)):
            cancelTimer(.keepAlive)
            sendHeartbeat()
        case .backingOff(let round):
            if profile.resetBackoffOnNetworkChange { scheduleRetry(round) }
        default:
            break
        }
    }

    /// The OS tore the socket down; the loop pauses until the network returns (003).
    mutating func networkLost() {
        let error = ChatError(.noInternet)
        switch phase {
        case .opening, .authenticating:
            emit(.dropSocket)
            attemptFailed(error)
        case .connected:
            emit(.dropSocket)
            connectionLost(error)
        case .loggingOut(_, let call):
            emit(.dropSocket)
            finishLogout(call, closeSocket: false)
        case .backingOff(let round):
            cancelTimer(.backoff)
            enter(.paused(round))
        case .idle, .paused, .kicked:
            break
        }
    }

    /// The process restarted: only the confirmed login and the device's network remain.
    mutating func relaunch() {
        if phase.hasSocket { emit(.dropSocket) }
        for kind in TimerKind.allCases where armedTimers.contains(kind) { cancelTimer(kind) }
        let kept = session?.confirmed == true ? session : nil
        let keptNetwork = network, keptOutput = output, keptNow = now, keptCitations = citations
        self = SDKStateMachine(profile: profile)
        citations = keptCitations
        session = kept
        network = keptNetwork
        output = keptOutput
        now = keptNow
    }
}
