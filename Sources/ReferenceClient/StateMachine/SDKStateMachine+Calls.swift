import ChatProtocol
import MockChatCore

/// The public API calls.
extension SDKStateMachine {
    /// Applies one command. API calls complete on `call` (a `nil` call is an app that
    /// passed no callback); lifecycle, network and relaunch ignore it.
    public mutating func perform(_ command: SDKCommand, call: CallID? = nil, now: Instant) -> [SDKAction] {
        begin(now)
        citeCommand(command)
        switch command {
        case .initialize(let settings): initialize(settings, call)
        case .login(let uid, let key): login(.authKey(uid: uid, key: key), call)
        case .loginWithToken(let token): login(.token(token), call)
        case .logout: logout(call)
        case .getLoggedInUser: complete(call, .success(loggedInUser.map(CallValue.user) ?? .none))
        case .connect: connect(call)
        case .disconnect: disconnect(call)
        case .ping: ping(call)
        case .getUser(let uid): getUser(uid, call)
        case .fetchNext(let request, let limit, let status): fetchNext(request, limit: limit, status: status, call)
        case .addUserListener(let id):
            if !userListeners.contains(id) { userListeners.append(id) }
            complete(call, .success(.none))
        case .removeUserListener(let id):
            userListeners.removeAll { $0 == id }
            complete(call, .success(.none))
        case .addConnectionListener(let id):
            if !connectionListeners.contains(id) { connectionListeners.append(id) }
            complete(call, .success(.none))
        case .removeConnectionListener(let id):
            connectionListeners.removeAll { $0 == id }
            complete(call, .success(.none))
        case .getConnectionStatus: complete(call, .success(.status(status)))
        case .backgroundTaskEnabled: complete(call, .success(.flag(backgroundTaskEnabled)))
        case .configureServices(let state): configureServices(state, call)
        case .willResignActive: willResignActive()
        case .didBackground: didBackground()
        case .foreground: foreground()
        case .network(let condition): networkChanged(to: condition)
        case .relaunch: relaunch()
        case .device(.networkChange): networkPathChanged()
        case .device: break   // carried out by the driver: its resolver and clock
        }
        return finish()
    }

    mutating func initialize(_ newSettings: AppSettings, _ call: CallID?) {
        settings = newSettings
        complete(call, .success(.none))
        // 000 "Default SDK behaviour": init() of a reopened app connects the saved user.
        if isAutoMode, phase == .idle, session?.confirmed == true, !stayOffline, !app.isBackground {
            startRound(reconnect: false)
        }
    }

    mutating func login(_ credentials: Credentials, _ call: CallID?) {
        guard settings != nil else { return complete(call, .failure(notInitialized)) }
        guard session == nil else { return complete(call, .failure(alreadyLoggedIn)) }
        stayOffline = false
        guard isAutoMode else {
            // Manual mode: recorded on the device only; connect() lets the server check it.
            session = Session(credentials: credentials, user: credentials.uid.map { User(uid: $0) }, confirmed: true)
            return complete(call, .success(.none))
        }
        if network == .down, !profile.retryLoginUntilAnswered {
            return complete(call, .failure(.noInternet))
        }
        session = Session(credentials: credentials, user: nil, confirmed: false)
        startRound(reconnect: false, waiting: [.login(call)])
    }

    mutating func logout(_ call: CallID?) {
        guard settings != nil else { return complete(call, .failure(notInitialized)) }
        guard session != nil else { return complete(call, .failure(.notLoggedIn)) }
        switch phase {
        case .connected:
            stopHeartbeat()
            let id = send(.logout)
            schedule(.pongTimeout, seconds: profile.pongTimeout)
            phase = .loggingOut(id, call)
        case .loggingOut:
            cite("calls.logout-completes")
            complete(call, .success(.none))
        default:
            cite("calls.logout-during-login")
            if phase.hasSocket { closeSocket(profile.logoutCloseCode, rule: "codes.logout-close-code") }
            cancelTimer(.backoff)
            cancelTimer(.pongTimeout)
            failWaiters(ChatError(.notLoggedIn, "logout() was called before the connection was made"))
            finishLogout(call, closeSocket: false)
        }
    }

    mutating func connect(_ call: CallID?) {
        guard settings != nil else { return complete(call, .failure(notInitialized)) }
        guard session?.confirmed == true else { return complete(call, .failure(.notLoggedIn)) }
        switch phase {
        case .connected, .loggingOut:
            complete(call, .failure(alreadyConnected))
        case .opening, .authenticating:
            cite("calls.connect-joins-attempt")
            stayOffline = false
            phase.round?.waiters.append(.connect(call))
        case .idle, .backingOff, .paused, .kicked:
            guard network != .down else { return complete(call, .failure(.noInternet)) }
            cite("calls.connect-starts-new-round")
            stayOffline = false
            startRound(reconnect: false, waiting: (phase.round?.waiters ?? []) + [.connect(call)])
        }
    }

    mutating func disconnect(_ call: CallID?) {
        guard settings != nil else { return complete(call, .failure(notInitialized)) }
        stayOffline = true
        let error = ChatError(.webSocketError, "disconnect() was called")
        if case .loggingOut(_, let logoutCall) = phase {
            cite("calls.disconnect-during-logout")
            finishLogout(logoutCall, closeSocket: true)
            return complete(call, .success(.none))
        }
        if phase.hasSocket { closeSocket(profile.disconnectCloseCode, rule: "codes.disconnect-close-code") }
        stopHeartbeat()
        cancelTimer(.backoff)
        failPending(error)
        if session?.confirmed == false { session = nil }
        leaveRound(for: .idle, failing: error)
        complete(call, .success(.none))
    }

    mutating func ping(_ call: CallID?) {
        guard settings != nil else { return complete(call, .failure(notInitialized)) }
        if isAutoMode, !profile.pingAvailableInAutoMode {
            if session == nil { cite("calls.ping-check-order") }   // both would fail it: the mode is checked first
            return complete(call, .failure(pingNotAvailable))
        }
        if let error = callError(needsConnection: true, "ping() needs a connected socket") {
            return complete(call, .failure(error))
        }
        awaitReply(send(.ping), .ping(call))
    }

    mutating func getUser(_ uid: String, _ call: CallID?) {
        if let error = callError(needsConnection: true, "getUser() needs a connected socket") {
            return complete(call, .failure(error))
        }
        awaitReply(send(.getUser(uid: uid)), .getUser(call))
    }

    /// A users request is built on its first use with `limit` and `status` and keeps
    /// them (docs/DRIVER.md, `fetchNext`); a logout or a relaunch discards it.
    mutating func fetchNext(_ request: String, limit: Int, status: UserStatus?, _ call: CallID?) {
        let spec = usersRequests[request] ?? UsersRequestSpec(limit: limit, status: status)
        usersRequests[request] = spec
        if let error = callError(needsConnection: true, "fetchNext() needs a connected socket") {
            return complete(call, .failure(error))
        }
        var cursor: String?
        switch cursors[request] {
        case .exhausted?:
            cite("users.exhausted-request")
            return complete(call, .success(.users(UsersPage(users: [], next: nil))))
        case .next(let next)?: cursor = next
        case nil: cursor = nil
        }
        awaitReply(send(.listUsers(UserListQuery(status: spec.status, limit: spec.limit, cursor: cursor))),
                   .listUsers(call, request: request))
    }

    /// The error for a call that needs a logged-in user (and maybe a connection), if any.
    func callError(needsConnection: Bool, _ detail: String) -> ChatError? {
        guard settings != nil else { return notInitialized }
        guard session?.confirmed == true else { return ChatError(.notLoggedIn) }
        guard !needsConnection || phase.isConnected else { return SDKError.notConnected(network: network, detail) }
        return nil
    }
}

