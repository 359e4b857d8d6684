import ChatProtocol

/// The rule-book rules (`Fixtures/spec/*.yaml`) behind what the machine does. Each input
/// collects the ids of the rules it applied in ``SDKStateMachine/citations``: the rules
/// that decided a status change, a timer's delay, a call's outcome, a close code or a
/// presence delivery. `mockchat fuzz --sdk` classifies a difference by the levels of the
/// rules the model cited at that point (docs/FUZZING.md, "Levels").
extension SDKStateMachine {
    /// Records that the current input applied these rules.
    mutating func cite(_ ids: String...) {
        for id in ids where !citations.contains(id) { citations.append(id) }
    }

    /// The rules an app call or an environment change applies, whatever its outcome.
    mutating func citeCommand(_ command: SDKCommand) {
        switch command {
        case .initialize: cite("connection.init-settings", "connection.init-reconnects-saved-user")
        case .login, .loginWithToken:
            cite(isAutoMode ? "connection.login-opens-socket" : "connection.manual-login-local", "connection.login-saves-user")
            if isAutoMode, profile.retryLoginUntilAnswered { cite("reconnection.login-retries-nexconn") }
        case .logout: cite("connection.logout-closes-socket")
        case .connect: cite("connection.connect-opens-socket", "connection.connect-needs-login")
        case .disconnect: cite("connection.disconnect-closes-socket", "reconnection.disconnect-stops", "connection.disconnect-persists")
        case .ping: cite("connection.ping-acknowledged")
        case .getUser: cite("users.get-user", "calls.need-connection")
        case .fetchNext: cite("users.list-paging", "users.request-keeps-parameters")
        case .addUserListener, .removeUserListener: cite("presence.remove-stops-events")
        case .addConnectionListener, .removeConnectionListener: cite("connection.listener-ids")
        case .getLoggedInUser: cite("connection.login-saves-user")
        case .getConnectionStatus: cite("connection.status-values")
        case .backgroundTaskEnabled: cite("background.task-flag", "background.task-flag-meaning")
        case .configureServices: cite("background.services-keep-connection", "background.services-lifecycle-calls")
        case .willResignActive: break
        case .didBackground:
            if servicesConfigured, profile.backgroundTaskWindow != nil {
                cite("background.services-keep-connection", "background.no-task-without-connection")
            } else if !isAutoMode {
                cite("background.manual-dropped-without-ping", "background.manual-last-ping")
            } else if profile.backgroundDisconnectAfter != nil {
                cite("background.nexconn-two-minutes")
            } else {
                cite("background.auto-closes-at-once")
            }
            cite("background.no-reconnect-in-background", "background.waiting-loop-stops")
        case .foreground:
            cite(isAutoMode ? "reconnection.foreground-auto" : "reconnection.foreground-manual", "reconnection.reset-on-foreground",
                 "reconnection.foreground-tries-at-once")
        case .network(let condition):
            cite(condition == .down ? "reconnection.no-network-pauses" : "reconnection.reset-on-network-change")
            if condition == .weak { cite("reconnection.weak-network") }
        case .relaunch: cite("connection.relaunch-forgets-process-state")
        case .device(.networkChange): cite("reconnection.network-change-probes", "reconnection.reset-on-network-change")
        case .device(.dnsFailure): cite("connection.dns-failure-error")
        case .device(.sleep): cite("reconnection.overdue-timers-after-sleep")
        case .device(.throttle): cite("reconnection.throttled-timers")
        }
    }

    /// The rules behind a connection event: the status values, the listener delivery,
    /// and what this particular status means at that point.
    mutating func citeStatusChange(to next: Phase) {
        cite("connection.status-values")
        if !connectionListeners.isEmpty { cite("connection.listener-event-per-change", "connection.listener-ids") }
        switch next {
        case .opening, .authenticating: cite("connection.status-connecting-during-attempt")
        case .backingOff: cite("reconnection.status-connecting-during-backoff")
        case .paused: cite("reconnection.status-disconnected-while-paused", "reconnection.no-network-pauses")
        case .kicked: cite("connection.kicked-status", "reconnection.kick-ends-loop")
        case .connected: cite(isAutoMode ? "connection.login-opens-socket" : "connection.connect-opens-socket")
        case .idle, .loggingOut: break
        }
    }

    /// The rules behind a timer's delay.
    mutating func citeTimer(_ kind: TimerKind) {
        switch kind {
        case .backoff:
            cite("reconnection.exponential-backoff", "reconnection.backoff-schedule", "reconnection.first-wait-after-loss")
            if profile.name == "cometchat-ios" { cite("reconnection.cometchat-reuses-schedule") }
        case .keepAlive: cite("connection.keep-alive-interval", "reconnection.heartbeat")
        case .pongTimeout: cite("connection.pong-timeout", "reconnection.weak-network")
        case .openTimeout: cite("reconnection.open-deadline", "reconnection.weak-network")
        case .callTimeout: cite("calls.reply-deadline")
        case .backgroundWindow:
            cite(profile.backgroundTaskWindow != nil && servicesConfigured ? "background.task-window" : "background.nexconn-disconnect-after")
        }
    }

    /// The rules behind a call that failed with `error`.
    mutating func citeFailure(_ error: ChatError) {
        if let rule = Self.errorRules[error.code] { cite(rule) }
        switch error.code {
        case profile.notInitializedError: cite("codes.not-initialized", "calls.before-init-fail")
        case profile.alreadyLoggedInError: cite("codes.already-logged-in", "calls.second-login-refused")
        case ErrorCode.noInternet.rawValue, ErrorCode.webSocketError.rawValue: cite("calls.need-connection")
        default: break
        }
    }

    /// The rules behind a presence delivery to the user listeners.
    mutating func citePresence(_ user: User) {
        cite("presence.delegate-events", "presence.listener-once-per-event", "presence.blocked-flags-per-viewer")
        if user.hasBlockedMe || user.blockedByMe { cite("presence.blocked-still-seen") }
    }

    /// The rule that owns each error code a call can end with.
    static let errorRules: [String: String] = [
        ErrorCode.notLoggedIn.rawValue: "users.not-logged-in",
        ErrorCode.noInternet.rawValue: "connection.no-internet-error",
        ErrorCode.webSocketError.rawValue: "connection.socket-error",
        ErrorCode.pingNotAvailable.rawValue: "connection.ping-not-available-in-auto",
        ErrorCode.alreadyConnected.rawValue: "connection.connect-while-connected",
        ErrorCode.uidNotFound.rawValue: "users.get-unknown",
        ErrorCode.authFailed.rawValue: "codes.auth-failed",
        ErrorCode.userDeactivated.rawValue: "codes.user-deactivated",
        ErrorCode.reconnectKickRefused.rawValue: "codes.reconnect-kick-refused",
        ErrorCode.invalidLimit.rawValue: "users.list-limit-bounds",
    ]
}
