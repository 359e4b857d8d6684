import ChatProtocol
import MockChatCore

/// calls.reply-deadline: getUser(), fetchNext() and ping() fail when their reply has not
/// come within `callTimeout` (D16), on a connection that otherwise stays up. One timer
/// runs for the oldest unanswered call; calls share one timeout, so they expire in the
/// order sent.
extension SDKStateMachine {
    /// Waits for the reply to a call just sent, arming the deadline if it is the oldest.
    mutating func awaitReply(_ id: RequestID, _ request: PendingRequest) {
        pending.append((id, request))
        let milliseconds = Profile.milliseconds(profile.callTimeout)
        callDeadlines.append((id, now.advanced(by: milliseconds)))
        if callDeadlines.count == 1 { schedule(.callTimeout, milliseconds: milliseconds) }
    }

    /// A reply came: the deadline moves to the next oldest call, if the answered one held it.
    mutating func replyArrived(_ id: RequestID) {
        guard let index = callDeadlines.firstIndex(where: { $0.id == id }) else { return }
        callDeadlines.remove(at: index)
        if index == 0 { armOldestCallDeadline() }
    }

    /// The oldest call's deadline passed: every call due by now fails with
    /// ERR_WEBSOCKET_ERROR; the connection is left to the keep-alive.
    mutating func callsTimedOut() {
        while let oldest = callDeadlines.first, oldest.at <= now {
            callDeadlines.removeFirst()
            guard let index = pending.firstIndex(where: { $0.id == oldest.id }) else { continue }
            let error = ChatError(.webSocketError, "No reply to the call")
            switch pending.remove(at: index).request {
            case .ping(let call), .getUser(let call), .listUsers(let call, _): complete(call, .failure(error))
            case .heartbeat: break
            }
        }
        armOldestCallDeadline()
    }

    private mutating func armOldestCallDeadline() {
        cancelTimer(.callTimeout)
        guard let oldest = callDeadlines.first else { return }
        schedule(.callTimeout, milliseconds: max(0, oldest.at.milliseconds - now.milliseconds))
    }
}
