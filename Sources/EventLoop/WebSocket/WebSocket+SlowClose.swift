import CWslay

extension WebSocket {
    /// How late this side does its part of the closing handshake, as a slow or
    /// overloaded server would: both are milliseconds of clock time, 0 for at once.
    public struct CloseDelays: Sendable, Equatable {
        /// The peer's close frame is answered this long after it arrived (nothing is
        /// written meanwhile).
        public var answerMs: Int64
        /// Once the closing handshake is complete, the TCP close waits this long.
        public var holdMs: Int64

        public init(answerMs: Int64 = 0, holdMs: Int64 = 0) {
            (self.answerMs, self.holdMs) = (answerMs, holdMs)
        }
    }
}

/// What a slow close is holding back, and what it already let go.
struct SlowCloseState {
    var answerTimer: Clock.TimerID?
    var answerReleased = false
    var closeTimer: Clock.TimerID?
    var closeReleased = false
}

extension WebSocket {
    /// Whether the answer to the peer's close frame waits (and with it every write);
    /// starts the wait on the first call.
    func holdsCloseAnswer(_ context: wslay_event_context_ptr) -> Bool {
        guard let answerMs = closeDelays?.answerMs, answerMs > 0, !slowClose.answerReleased,
              wslay_event_get_close_received(context) != 0, wslay_event_get_close_sent(context) == 0 else { return false }
        if slowClose.answerTimer == nil {
            slowClose.answerTimer = connection.loop.clock.schedule(after: answerMs) { [weak self] in
                self?.releaseCloseAnswer()
            }
            onCloseDelayed?("the answer to the peer's close held \(answerMs) ms")
        }
        return true
    }

    /// Whether the TCP close after a complete closing handshake waits; starts the wait
    /// on the first call.
    func holdsTCPClose() -> Bool {
        guard let holdMs = closeDelays?.holdMs, holdMs > 0, !slowClose.closeReleased else { return false }
        if slowClose.closeTimer == nil {
            slowClose.closeTimer = connection.loop.clock.schedule(after: holdMs) { [weak self] in
                self?.releaseTCPClose()
            }
            onCloseDelayed?("the TCP close after the closing handshake held \(holdMs) ms")
        }
        return true
    }

    private func releaseCloseAnswer() {
        connection.loop.clock.cancel(slowClose.answerTimer)
        slowClose.answerTimer = nil
        slowClose.answerReleased = true
        flush()
    }

    private func releaseTCPClose() {
        connection.loop.clock.cancel(slowClose.closeTimer)
        slowClose.closeTimer = nil
        slowClose.closeReleased = true
        connection.closeAfterWrites()
    }

    /// The delays changed: what they no longer hold goes on at once.
    func releaseSlowClose() {
        if slowClose.answerTimer != nil, (closeDelays?.answerMs ?? 0) == 0 { releaseCloseAnswer() }
        if slowClose.closeTimer != nil, (closeDelays?.holdMs ?? 0) == 0 { releaseTCPClose() }
    }

    func cancelSlowClose() {
        connection.loop.clock.cancel(slowClose.answerTimer)
        connection.loop.clock.cancel(slowClose.closeTimer)
        slowClose = SlowCloseState()
    }
}
