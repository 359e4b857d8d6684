"""Seeded bugs, for showing that the conformance catalogue catches real SDK mistakes.
MOCKCHAT_SDK_BUG=<name> switches one on; without it the SDK behaves as documented."""

import os

BUGS = {
    "backoff-shift": "the backoff table starts one step late (0.25 s instead of 0.05 s)",
    "ping-in-auto": "ping() is allowed in auto mode instead of ERROR_PING_NOT_AVAILABLE",
    "no-background-window": "the 30 s background task never closes the socket",
    "reconnect-after-kick": "a kicked device reconnects like after any other loss",
    "no-foreground-reset": "the backoff interval is not reset on return to the foreground",
    "unsubscribed-roles": "a roles subscription asks the server for everyone's presence",
    "no-invalid-limit": "a users request with limit 101 is sent as 100 instead of failing",
    "stale-last-active": "the user cache keeps the first lastActiveAt it saw",
    "no-network-pause": "reconnection does not pause when the network goes down",
    "listener-twice-after-reconnect": "each reconnection registers the connection listeners again: called twice per change afterwards",
    "connection-listener-not-removed": "removeConnectionListener looks the listener up by a fresh wrapper and removes nothing",
    "presence-twice-after-reconnect": "each reconnection subscribes the presence handler again: user listeners get every change twice",
    "no-backoff-reset-on-success": "a successful reconnection keeps the backoff position: the next loss waits where the last loop stopped",
    "reconnect-timer-survives-logout": "the reconnection timer armed before logout() or disconnect() still fires and opens a socket",
    "double-connect": "connect() while an attempt is under way opens a second socket instead of joining it",
    "stale-pong-timer": "a keep-alive reply does not cancel the pong deadline: the connection is dropped 10 s after a ping",
    "no-disconnected-before-retry": "a lost connection goes straight to connecting without raising disconnected",
    "hide-blocked-presence": "presence changes of users the app user has blocked are not passed to the user listeners",
    "blocked-flags-swapped": "the user parser swaps hasBlockedMe and blockedByMe",
    "presence-lost-after-reconnect": "a reconnection logs in without the presence subscription: no presence events after it",
    "relaunch-forgets-login": "the logged-in user is kept in memory only: a relaunched app has nobody to reconnect",
    "users-request-restarts": "fetchNext does not keep the cursor: every call returns the first page again",
    "disconnected-after-kick": "a kicked device also raises disconnected when the server closes the socket",
    "no-open-deadline": "an attempt has no deadline for the answer to its upgrade: an upgrade never answered leaves the SDK connecting for good",
    "no-call-deadline": "getUser(), fetchNext() and ping() have no reply deadline: a reply the server holds back leaves the call waiting for good on a connection that stays up",
    "no-pong-deadline": "a keep-alive ping has no reply deadline: a silent connection is found only when the server gives up on it",
    "lost-login-ends-loop": "a reconnection whose socket ends before its login is answered is taken for a refused login: an error event, and the loop ends",
    "waits-for-server-close": "a close waits for the server's answer and then for the server to end the TCP connection, with no deadline of its own: a server slow to close holds the connection open",
    "dns-failure-ends-loop": "a name-resolution failure is reported as a connection error and ends the reconnection loop",
    "ignores-network-change": "the OS's network path change is ignored: a silent old socket is found only by the next keep-alive",
    "uptime-timers": "the timers run on the uptime clock, which stops while the device sleeps: overdue timers fire late after a wake",
    "wall-clock-idle-check": "the keep-alive timer reads a gap since the server's last frame longer than keepAliveInterval + pongTimeout as a dead connection, so a late (throttled) timer reconnects",
}


def active_bugs() -> frozenset:
    name = os.environ.get("MOCKCHAT_SDK_BUG", "").strip()
    if not name:
        return frozenset()
    if name not in BUGS:
        raise ValueError(f"MOCKCHAT_SDK_BUG={name!r} is not a seeded bug; known: {', '.join(sorted(BUGS))}")
    return frozenset([name])
