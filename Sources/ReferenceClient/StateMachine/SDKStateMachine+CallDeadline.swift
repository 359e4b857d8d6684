import ChatProtocol
import MockChatCore

/// calls.reply-deadline: getUser(), fetchNext() and ping() fail when their reply has not
/// come within `callTimeout` (D16), on a connection that otherwise stays up. One timer
/// runs for the oldest unanswered call; calls share one timeout, so they expire in the
/// order sent.
extension SDKStateMachine {
    /// Waits for the reply to a call just sent, arming the deadline if it is the oldest.
    mutating func awaitReply(_ id: RequestID, _ request: PendingRequest) {
        let milliseconds = Profile.milliseconds(profile.callTimeout)
        let isOldest = !pending.contains { $0.due != nil }
        pending.append((id, request, now.advanced(by: milliseconds)))
        if isOldest { schedule(.callTimeout, milliseconds: milliseconds) }
    }

    /// The oldest call's deadline passed: every call due by now fails with
    /// ERR_WEBSOCKET_ERROR; the connection is left to the keep-alive.
    mutating func callsTimedOut() {
        while let index = pending.firstIndex(where: { $0.due != nil }), let due = pending[index].due, due <= now {
            let error = ChatError(.webSocketError, "No reply to the call")
            switch pending.remove(at: index).request {
            case .ping(let call), .getUser(let call), .listUsers(let call, _): complete(call, .failure(error))
            case .heartbeat: break
            }
        }
        armOldestCallDeadline()
    }

    /// The deadline timer, for the oldest unanswered call if there is one.
    mutating func armOldestCallDeadline() {
        cancelTimer(.callTimeout)
        guard let due = pending.lazy.compactMap(\.due).first else { return }
        schedule(.callTimeout, milliseconds: max(0, due.milliseconds - now.milliseconds))
    }
}
