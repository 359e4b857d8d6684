import ChatProtocol
import MockChatCore

/// What the driver reports about the socket and the timers.
extension SDKStateMachine {
    /// The socket asked for by `openSocket` is open: log in on it.
    public mutating func socketOpened(now: Instant) -> [SDKAction] {
        begin(now)
        guard case .opening(let reconnect, let round) = phase else { return finish() }
        cancelTimer(.openTimeout)
        guard let settings, let session else {
            emit(.dropSocket)
            endRound(failing: ChatError(.notLoggedIn))
            return finish()
        }
        var login = LoginRequest(uid: session.credentials.uid, deviceId: settings.deviceId,
                                 platform: settings.platform, presence: settings.presence,
                                 reconnect: reconnect,
                                 reconnectKickEnable: settings.reconnectKickEnable ?? profile.defaultReconnectKickEnable)
        switch session.credentials {
        case .authKey(_, let key): login.authKey = key
        case .token(let token): login.token = token
        }
        let id = send(.login(login))
        schedule(.pongTimeout, seconds: profile.loginReplyTimeout)
        phase = .authenticating(id, reconnect: reconnect, round)
        return finish()
    }

    /// The socket asked for by `openSocket` could not be opened (refused, unreachable,
    /// upgrade rejected). `reason` goes into the ERR_WEBSOCKET_ERROR description.
    public mutating func socketFailed(_ reason: String, now: Instant) -> [SDKAction] {
        begin(now)
        if case .opening = phase { attemptFailed(ChatError(.webSocketError, reason)) }
        return finish()
    }

    /// The socket ended without the machine asking: `receivedCode` is the server's close
    /// code, `nil` when the stream just died.
    public mutating func socketClosed(receivedCode: UInt16?, now: Instant) -> [SDKAction] {
        begin(now)
        let code = receivedCode.flatMap(CloseCode.init(rawValue:))
        let detail = "The connection closed (\(receivedCode.map(String.init) ?? "no close frame"))"
        switch phase {
        case .opening:
            attemptFailed(ChatError(.webSocketError, detail))
        case .authenticating:
            switch code {
            case .deviceKicked?: kicked(reason: "closed with 4001")
            // The error reply was lost (weak network); the close code still tells.
            case .reconnectRefused?: loginRejected(ChatError(.reconnectKickRefused))
            case .loginFailed?: loginRejected(ChatError(.webSocketError, "The server refused the login (4003)"))
            default: attemptFailed(ChatError(.webSocketError, detail))
            }
        case .connected:
            if code == .deviceKicked {
                kicked(reason: "closed with 4001")
            } else {
                connectionLost(ChatError(.webSocketError, detail))
            }
        case .loggingOut(_, let call):
            finishLogout(call, closeSocket: false)
        case .idle, .backingOff, .paused, .kicked:
            break
        }
        return finish()
    }

    /// A frame from the server, already parsed.
    public mutating func frameReceived(_ message: ServerMessage, now: Instant) -> [SDKAction] {
        begin(now)
        switch message {
        case .result(let id, let body):
            reply(to: id, .success(body))
        case .error(let id?, let error):
            reply(to: id, .failure(error))
        case .error(nil, _):
            break
        case .userOnline(let user):
            if !userListeners.isEmpty { emit(.userEvent(listeners: userListeners, .online, user)) }
        case .userOffline(let user):
            if !userListeners.isEmpty { emit(.userEvent(listeners: userListeners, .offline, user)) }
        case .deviceKicked(let reason, _, _):
            if phase.hasSocket { kicked(reason: reason) }
        }
        return finish()
    }

    /// A timer armed by `scheduleTimer` fired.
    public mutating func timerFired(_ kind: TimerKind, now: Instant) -> [SDKAction] {
        begin(now)
        guard armedTimers.remove(kind) != nil else { return finish() }
        switch kind {
        case .backoff:
            if case .backingOff(let round) = phase { attempt(reconnect: true, round) }
        case .keepAlive:
            if case .connected(.running) = phase { sendHeartbeat() }
        case .pongTimeout:
            replyTimedOut()
        case .openTimeout:
            // The upgrade was never answered: abandon the attempt, the loop goes on (003, weak network).
            if case .opening = phase {
                emit(.dropSocket)
                attemptFailed(ChatError(.webSocketError, "No answer to the upgrade"))
            }
        case .callTimeout:
            callsTimedOut()
        case .backgroundWindow:
            backgroundWindowEnded()
        }
        return finish()
    }

    /// No reply within `pongTimeout` (a login: `loginReplyTimeout`): a heartbeat timeout (003, weak network).
    mutating func replyTimedOut() {
        switch phase {
        case .authenticating:
            emit(.dropSocket)
            attemptFailed(ChatError(.webSocketError, "No reply to the login"))
        case .connected:
            emit(.dropSocket)
            connectionLost(ChatError(.webSocketError, "Heartbeat timeout"))
        case .loggingOut(_, let call):
            emit(.dropSocket)
            finishLogout(call, closeSocket: false)
        case .idle, .opening, .backingOff, .paused, .kicked:
            break
        }
    }

    /// Routes a reply to whatever sent the request.
    mutating func reply(to id: RequestID, _ outcome: Result<JSONObject, ChatError>) {
        if case .authenticating(let loginID, _, _) = phase, loginID == id {
            switch outcome {
            case .success(let body): loginAccepted(body)
            case .failure(let error): loginRejected(error)
            }
            return
        }
        if case .loggingOut(let logoutID, let call) = phase, logoutID == id {
            finishLogout(call, closeSocket: true)
            return
        }
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return }
        let heldDeadline = pending[index].due != nil && !pending[..<index].contains { $0.due != nil }
        let request = pending.remove(at: index).request
        if heldDeadline { armOldestCallDeadline() }
        switch (request, outcome) {
        case (.heartbeat, _):
            heartbeatAnswered(id)
        case (.ping(let call), .success):
            complete(call, .success(.none))
        case (.getUser(let call), .success(let body)):
            let user = body["user"].flatMap(User.init(json:))
            complete(call, user.map { .success(.user($0)) } ?? .failure(SDKError.malformedReply))
        case (.listUsers(let call, let name), .success(let body)):
            guard let page = Self.usersPage(body) else { return complete(call, .failure(SDKError.malformedReply)) }
            cursors[name] = page.next.map(Cursor.next) ?? .exhausted
            complete(call, .success(.users(page)))
        case (.ping(let call), .failure(let error)), (.getUser(let call), .failure(let error)),
             (.listUsers(let call, _), .failure(let error)):
            complete(call, .failure(error))
        }
    }

    /// Reads `{"users": [...], "next": cursor-or-null}`.
    static func usersPage(_ body: JSONObject) -> UsersPage? {
        guard let list = body["users"]?.arrayValue else { return nil }
        let users = list.compactMap(User.init(json:))
        guard users.count == list.count else { return nil }
        return UsersPage(users: users, next: body["next"]?.stringValue)
    }
}
