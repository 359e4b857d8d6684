"""Rows of the fault table (fault-table.py): the faults on frames and sessions:
drop, blackhole, refuseConnections, stall, link (whole and chosen frames), delay, reply."""
import json

from fault_peer import WAIT, Peer, first, labels, logged_in, row, upgrade_text

# ---- drop, blackhole, refuseConnections, stall ----

@row("drop", '{"fault":"drop","uid":"alice"}')
def drop(clock):
    bob = logged_in(clock, "bob", "bob-laptop")
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="drop", uid="alice")
    alice.pump(lambda: alice.ended, WAIT)
    bob.pump(lambda: bob.events("user.offline", "alice"), WAIT)
    return (f"alice: {alice.ending()}; bob: {labels(bob.frames[1:])}",
            "alice: reset, no close frame; bob: user.online alice, user.offline alice")


@row("blackhole", '{"fault":"blackhole","uid":"alice"}')
def blackhole(clock):
    bob = logged_in(clock, "bob", "bob-laptop")
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.mark()
    clock.fault(fault="blackhole", uid="alice")
    ping = alice.send("ping")
    clock.at(15000)
    bob.send("ping")  # bob stays alive past alice's deadline
    alice.pump()
    answered = alice.has_reply(ping)
    when = first(clock, alice, lambda: alice.ended, [29999, 30000])
    bob.pump(lambda: bob.events("user.offline", "alice"), WAIT)
    return (f"ping answered: {answered}; alice ends {when}: {alice.ending()}; bob: {labels(bob.events('user.offline'))}",
            "ping answered: False; alice ends +30000 ms: end of stream, no close frame; bob: user.offline alice")


@row("refuseConnections", '{"fault":"refuseConnections"}')
def refuse(clock):
    clock.fault(fault="refuseConnections")
    peer = Peer(clock)
    peer.pump(lambda: peer.ended, WAIT)
    health = clock.call("GET", "/control/health")["ok"]
    return (f"upgrade: {upgrade_text(peer)}; control API ok: {health}",
            "upgrade: no HTTP response, reset; control API ok: True")


@row("stall", '{"fault":"stall"}')
def stall(clock):
    clock.fault(fault="stall")
    clock.mark()
    peer = Peer(clock)
    peer.pump(lambda: peer.response, WAIT)
    login = peer.login("alice", "alice-laptop")
    clock.at(60000)
    peer.pump()
    answered = peer.has_reply(login)
    clock.call("POST", "/control/reset")
    peer.pump(lambda: peer.ended, WAIT)
    return (f"upgrade: {upgrade_text(peer) if not peer.ended else '101'}; login answered by +60000 ms: {answered}; "
            f"at the reset: {peer.ending()}",
            "upgrade: 101; login answered by +60000 ms: False; at the reset: end of stream, no close frame")


# ---- links over whole connections ----

@row("link delayMs", '{"fault":"link","uid":"alice","direction":"out","delayMs":500}')
def link_delay(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", direction="out", delayMs=500)
    clock.mark()
    ping = alice.send("ping")
    return f"ping reply {first(clock, alice, lambda: alice.has_reply(ping), [0, 499, 500])}", "ping reply +500 ms"


@row("link jitterMs", '{"fault":"link","uid":"alice","direction":"out","delayMs":200,"jitterMs":50,"seed":7}')
def link_jitter(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", direction="out", delayMs=200, jitterMs=50, seed=7)
    clock.mark()
    pings = [alice.send("ping") for _ in range(5)]
    arrived = {}
    for offset in range(140, 261, 5):
        clock.at(offset)
        alice.pump(lambda: len(alice.frames) > len(arrived) + 1, 0.1)
        for frame in alice.frames[1:]:
            arrived.setdefault(frame["id"], offset)
    order = [frame["id"] for frame in alice.frames[1:]]
    times = [arrived.get(p) for p in pings]
    inside = all(t is not None and 150 <= t <= 250 for t in times)
    return (f"5 replies, in the order sent: {order == pings}; all between +150 and +250 ms: {inside}",
            "5 replies, in the order sent: True; all between +150 and +250 ms: True", f"arrived at {times} ms")


@row("link dropPercent", '{"fault":"link","uid":"alice","direction":"in","dropPercent":100}')
def link_drop(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", direction="in", dropPercent=100)
    clock.mark()
    for _ in range(3):
        alice.send("ping")
    clock.at(1000)
    alice.pump()
    return f"3 pings: replies by +1000 ms: {labels(alice.frames[1:])}", "3 pings: replies by +1000 ms: nothing"


@row("link bytesPerSecond", '{"fault":"link","uid":"alice","direction":"out","bytesPerSecond":1000,"sliceBytes":16}')
def link_rate(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", direction="out", bytesPerSecond=1000, sliceBytes=16)
    clock.mark()
    ping = alice.send("ping")
    when = first(clock, alice, lambda: alice.has_reply(ping), list(range(0, 120)))
    size = len(json.dumps(alice.reply(ping), separators=(",", ":"))) if alice.has_reply(ping) else 0
    return (f"ping reply, {size} bytes in 16-byte writes, whole: {when}",
            f"ping reply, {size} bytes in 16-byte writes, whole: +{size} ms")


@row("link closeFrame", '{"fault":"link","uid":"alice","direction":"out","closeFrame":false} then a kick')
def link_close_frame(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", direction="out", closeFrame=False)
    clock.call("POST", "/control/kick", {"uid": "alice"})
    alice.pump(lambda: alice.ended, WAIT)
    return (f"{labels(alice.frames[1:])}, then {alice.ending()}", "device.kicked, then end of stream, no close frame")


@row("delay", '{"fault":"delay","uid":"alice","ms":300}')
def delay(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="delay", uid="alice", ms=300)
    clock.mark()
    ping = alice.send("ping")
    return f"ping reply {first(clock, alice, lambda: alice.has_reply(ping), [0, 299, 300])}", "ping reply +300 ms"


# ---- links for chosen frames: hold and release, delay, drop, duplicate, reorder ----

@row("frames hold", '{"fault":"link","uid":"alice","frames":{"reply":"users.get"},"hold":true}, released with "enabled":false')
def frames_hold(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", frames={"reply": "users.get"}, hold=True)
    alice.send("users.get", uid="bob")
    ping = alice.send("ping")
    alice.pump(lambda: alice.has_reply(ping), WAIT)
    bob = logged_in(clock, "bob", "bob-laptop")
    alice.pump(lambda: alice.events("user.online", "bob"), WAIT)
    before = labels(alice.frames[1:])
    clock.fault(fault="link", uid="alice", frames={"reply": "users.get"}, enabled=False)
    alice.pump(lambda: alice.has_reply(2), WAIT)
    status = ((alice.reply(2) or {}).get("result") or {}).get("user", {}).get("status")
    bob.shut()
    return (f"held: {before}; released: {labels(alice.frames[3:])} (bob {status})",
            "held: reply 3, user.online bob; released: reply 2 (bob offline)")


def reorder_row(name, frames, delay):
    """A chosen kind of frame delayed: the ping sent after it is answered first."""
    body = {"fault": "link", "uid": "alice", "frames": frames, "delayMs": delay}

    @row(name, json.dumps(body, separators=(",", ":")))
    def reordered(clock):
        alice = logged_in(clock, "alice", "alice-laptop")
        clock.fault(**body)
        clock.mark()
        get = alice.send("users.get", uid="bob")
        ping = alice.send("ping")
        ping_at = first(clock, alice, lambda: alice.has_reply(ping), [0])
        get_at = first(clock, alice, lambda: alice.has_reply(get), [delay - 1, delay])
        return (f"{labels(alice.frames[1:])}: ping reply {ping_at}, users.get reply {get_at}",
                f"reply 3, reply 2: ping reply +0 ms, users.get reply +{delay} ms")


reorder_row("frames delayMs (reorder)", {"reply": "users.get"}, 500)
reorder_row("frames op (inbound reorder)", {"op": "users.get"}, 1000)


@row("frames dropPercent", '{"fault":"link","uid":"alice","frames":{"event":"user.online"},"dropPercent":100}')
def frames_drop(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", frames={"event": "user.online"}, dropPercent=100)
    bob = logged_in(clock, "bob", "bob-laptop")
    bob.close()
    alice.pump(lambda: alice.events("user.offline", "bob"), WAIT)
    return f"bob logs in and out: alice gets {labels(alice.frames[1:])}", "bob logs in and out: alice gets user.offline bob"


@row("frames dropPercent seeded", '{"fault":"link","uid":"alice","frames":{"event":"user.online"},"dropPercent":50,"seed":9}, 20 pushed events, two servers')
def frames_drop_seeded(clock):
    def kept(server):
        alice = logged_in(server, "alice", "alice-laptop")
        server.fault(fault="link", uid="alice", frames={"event": "user.online"}, dropPercent=50, seed=9)
        for index in range(20):
            server.call("POST", "/control/push", {"uid": "alice", "event": {"event": "user.online", "user": {"uid": f"u{index}"}}})
        server.call("POST", "/control/push", {"uid": "alice", "frame": "end"})
        alice.pump(lambda: "end" in alice.frames, WAIT)
        return [int(f["user"]["uid"][1:]) for f in alice.events("user.online")]
    first_run = kept(clock)
    other = clock.another()
    try:
        second_run = kept(other)
    finally:
        other.stop()
    return (f"{len(first_run)} of 20 kept; the same on a second server: {first_run == second_run}",
            "13 of 20 kept; the same on a second server: True")


@row("frames duplicate", '{"fault":"link","uid":"alice","frames":{"event":"user.online"},"duplicate":true}')
def frames_duplicate(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", frames={"event": "user.online"}, duplicate=True)
    bob = logged_in(clock, "bob", "bob-laptop")
    alice.pump(lambda: len(alice.events("user.online", "bob")) == 2, WAIT)
    alice.pump()
    bob.shut()
    return f"bob logs in: alice gets {labels(alice.frames[1:])}", "bob logs in: alice gets user.online bob, user.online bob"


@row("frames times", '{"fault":"link","uid":"alice","frames":{"reply":"users.get"},"hold":true,"times":1}')
def frames_times(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="link", uid="alice", frames={"reply": "users.get"}, hold=True, times=1)
    alice.send("users.get", uid="bob")
    second = alice.send("users.get", uid="carol")
    alice.pump(lambda: alice.has_reply(second), WAIT)
    alice.pump()
    return f"two users.get: {labels(alice.frames[1:])}", "two users.get: reply 3"


# ---- scripted replies ----

@row("reply error", '{"fault":"reply","uid":"alice","op":"ping","error":{"errorCode":"ERR_INTERNAL"},"delayMs":100,"times":2}')
def reply_error(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="reply", uid="alice", op="ping", error={"errorCode": "ERR_INTERNAL"}, delayMs=100, times=2)
    clock.mark()
    alice.send("ping")
    second = alice.send("ping")
    when = first(clock, alice, lambda: alice.has_reply(second), [99, 100])
    third = alice.send("ping")
    alice.pump(lambda: alice.has_reply(third), WAIT)
    return f"{labels(alice.frames[1:])}; the two scripted {when}", "error 2 ERR_INTERNAL, error 3 ERR_INTERNAL, reply 4; the two scripted +100 ms"


@row("reply match", '{"fault":"reply","op":"users.get","match":{"uid":"bob"},"result":{"user":null}}')
def reply_match(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="reply", op="users.get", match={"uid": "bob"}, result={"user": None})
    bob, carol = alice.send("users.get", uid="bob"), alice.send("users.get", uid="carol")
    alice.pump(lambda: alice.has_reply(carol), WAIT)
    users = [alice.reply(i)["result"]["user"] for i in (bob, carol)]
    return (f"bob: {json.dumps(users[0])}; carol: {users[1] and users[1]['uid']}", "bob: null; carol: carol")
