"""Rows of the fault table (fault-table.py): each fault left on is cleared by
`POST /control/reset`, and bad bodies of each fault get 400 (404 for an unknown
connection) with a message naming the field, the fault plan unchanged."""
import json

from fault_peer import WAIT, Peer, row

# One body per fault that stays on until cleared.
LEFT_ON = [
    {"fault": "blackhole", "uid": "alice"},
    {"fault": "refuseConnections"},
    {"fault": "stall"},
    {"fault": "delay", "uid": "alice", "ms": 300},
    {"fault": "link", "direction": "out", "delayMs": 500},
    {"fault": "link", "uid": "alice", "frames": {"reply": "ping"}, "hold": True},
    {"fault": "reply", "op": "ping", "error": {"errorCode": "ERR_INTERNAL"}},
    {"fault": "silence"},
    {"fault": "upgrade", "answer": "never"},
    {"fault": "upgrade", "status": 503},
    {"fault": "upgrade", "deviceId": "alice-laptop", "answer": "reset"},
    {"fault": "cut", "uid": "alice", "afterMs": 0},
    {"fault": "latency", "ms": 300},
    {"fault": "slowClose", "answerMs": 2000},
]


def reset_row(body):
    @row(f"reset clears {body['fault']}", f"{json.dumps(body, separators=(',', ':'))}, then POST /control/reset")
    def cleared(clock):
        empty = clock.call("GET", "/control/faults")
        clock.fault(**body)
        set_on = clock.call("GET", "/control/faults") != empty
        clock.call("POST", "/control/reset")
        plan_empty = clock.call("GET", "/control/faults") == empty
        return (f"set: {set_on}; plan empty after: {plan_empty}; then alice logs in and pings at +0 ms: {served(clock)}",
                "set: True; plan empty after: True; then alice logs in and pings at +0 ms: reply 1, reply 2")
    return cleared


def served(clock):
    """What a new connection of alice gets for its login and a ping, the clock standing."""
    peer = Peer(clock)
    peer.pump(lambda: peer.response or peer.ended, WAIT)
    if not peer.upgraded():
        return f"upgrade: {peer.response.status_code if peer.response else peer.ended or 'no answer'}"
    login = peer.login("alice", "alice-laptop")
    ping = peer.send("ping")
    peer.pump(lambda: peer.has_reply(login) and peer.has_reply(ping) or peer.ended, WAIT)
    return ", ".join(("reply " if "result" in f else "error ") + str(f.get("id")) for f in peer.frames) or "nothing"


for left in LEFT_ON:
    reset_row(left)

# Bad bodies per fault: (body, status, the field its message must name).
BAD = {
    "drop": [({"fault": "drop"}, 400, "'connection'"), ({"fault": "drop", "connection": ""}, 400, "'connection'"),
             ({"fault": "drop", "connection": "c99"}, 404, "'c99'")],
    "blackhole": [({"fault": "blackhole"}, 400, "'uid'"), ({"fault": "blackhole", "uid": 5}, 400, "'uid'"),
                  ({"fault": "blackhole", "uid": "a", "enabled": "yes"}, 400, "'enabled'")],
    "refuseConnections": [({"fault": "refuseConnections", "uid": "alice"}, 400, "'uid'"),
                          ({"fault": "refuseConnections", "speed": 1}, 400, "'speed'")],
    "stall": [({"fault": "stall", "deviceId": "x"}, 400, "'deviceId'"), ({"fault": "stall", "ms": 5}, 400, "'ms'")],
    "delay": [({"fault": "delay"}, 400, "'ms'"), ({"fault": "delay", "ms": -1}, 400, "'ms'"),
              ({"fault": "delay", "ms": "x"}, 400, "'ms'")],
    "link": [({"fault": "link", "speed": 1}, 400, "'speed'"), ({"fault": "link", "delayMs": 10, "jitterMs": 20}, 400, "'jitterMs'"),
             ({"fault": "link", "sliceBytes": 4}, 400, "'sliceBytes'"), ({"fault": "link", "dropPercent": 101}, 400, "'dropPercent'"),
             ({"fault": "link", "direction": "up", "delayMs": 1}, 400, "'direction'"), ({"fault": "link", "hold": True}, 400, "'hold'")],
    "link frames": [({"fault": "link", "frames": {"reply": ""}, "hold": True}, 400, "'frames'"),
                    ({"fault": "link", "frames": {"event": "user.online"}, "direction": "in", "hold": True}, 400, "'frames.event'"),
                    ({"fault": "link", "frames": {"reply": "ping"}, "hold": True, "times": 0}, 400, "'times'"),
                    ({"fault": "link", "frames": {"reply": "ping"}, "sliceBytes": 4}, 400, "'sliceBytes'")],
    "reply": [({"fault": "reply", "op": "ping"}, 400, "'result'"), ({"fault": "reply", "op": "ping", "error": {}}, 400, "'errorCode'"),
              ({"fault": "reply", "op": "ping", "result": {}, "delayMs": -5}, 400, "'delayMs'")],
    "silence": [({"fault": "silence", "newConnections": "maybe"}, 400, "'newConnections'"),
                ({"fault": "silence", "connection": "c1", "uid": "alice"}, 400, "'connection'"),
                ({"fault": "silence", "connection": "c99"}, 404, "'c99'")],
    "upgrade": [({"fault": "upgrade"}, 400, "'status'"), ({"fault": "upgrade", "status": 200}, 400, "'status'"),
                ({"fault": "upgrade", "answer": "reset", "retryAfter": 5}, 400, "'retryAfter'"),
                ({"fault": "upgrade", "status": 503, "uid": "alice"}, 400, "'status'"),
                ({"fault": "upgrade", "answer": "never", "attempt": 2, "sharePercent": 5}, 400, "'attempt'"),
                ({"fault": "upgrade", "status": 503, "body": "x" * 5000}, 400, "'body'")],
    "cut": [({"fault": "cut"}, 400, "'afterBytes'"), ({"fault": "cut", "afterMs": 5, "afterBytes": 5}, 400, "'afterMs'"),
            ({"fault": "cut", "afterMs": 5, "how": "explode"}, 400, "'how'"), ({"fault": "cut", "afterBytes": 0}, 400, "'afterBytes'")],
    "latency": [({"fault": "latency"}, 400, "'ms'"), ({"fault": "latency", "ms": 0}, 400, "'ms'"),
                ({"fault": "latency", "ms": 60001}, 400, "'ms'")],
    "slowClose": [({"fault": "slowClose"}, 400, "'answerMs'"), ({"fault": "slowClose", "holdMs": -1}, 400, "'holdMs'"),
                  ({"fault": "slowClose", "answerMs": 600001}, 400, "'answerMs'")],
    "unknown": [({"fault": "explode"}, 400, "'explode'"), ({}, 400, "'fault'")],
}


def bad_row(name, cases):
    @row(f"bad bodies: {name}", f"{len(cases)} bodies, e.g. {json.dumps(cases[0][0], separators=(',', ':'))}")
    def refused(clock):
        before = clock.call("GET", "/control/faults")
        seen = []
        for body, _, field in cases:
            status, text = clock.server.control("POST", "/control/faults", body)
            message = json.loads(text).get("error", text) if text.startswith("{") else text
            seen.append(f"{status} naming {field}" if field in message else f"{status}: {message}")
        unchanged = clock.call("GET", "/control/faults") == before
        return ("; ".join(seen) + f"; plan unchanged: {unchanged}",
                "; ".join(f"{status} naming {field}" for _, status, field in cases) + "; plan unchanged: True")
    return refused


for fault, bodies in BAD.items():
    bad_row(fault, bodies)
