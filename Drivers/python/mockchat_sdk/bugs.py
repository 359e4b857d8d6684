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
}


def active_bugs() -> frozenset:
    name = os.environ.get("MOCKCHAT_SDK_BUG", "").strip()
    if not name:
        return frozenset()
    if name not in BUGS:
        raise ValueError(f"MOCKCHAT_SDK_BUG={name!r} is not a seeded bug; known: {', '.join(sorted(BUGS))}")
    return frozenset([name])
