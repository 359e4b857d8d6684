"""Rows of the fault table (fault-table.py): the faults on a connection's path:
silence (old sockets, new attempts hanging or passing), upgrade (statuses, never,
reset, the Nth attempt, a seeded share, times, the Nth login of a device), cut,
slowClose and latency."""
import json
from http import HTTPStatus

from fault_peer import WAIT, Peer, attempts, first, labels, logged_in, row, since_login, upgrade_text


# ---- silence ----

@row("silence", '{"fault":"silence","uid":"alice"}, lifted with "enabled":false')
def silence(clock):
    bob = logged_in(clock, "bob", "bob-laptop")
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.mark()
    clock.fault(fault="silence", uid="alice")
    alice.send("ping")
    clock.at(15000)
    bob.send("ping")  # bob stays alive past alice's deadline
    offline = first(clock, bob, lambda: bob.events("user.offline", "alice"), [29999, 30000])
    clock.at(40000)
    alice.pump()
    at_40 = since_login(alice)
    clock.fault(fault="silence", uid="alice", enabled=False)
    alice.pump(lambda: alice.ended, WAIT)
    return (f"bob: user.offline alice {offline}; alice at +40000 ms: {at_40}; at the lift: {alice.ending()}",
            "bob: user.offline alice +30000 ms; alice at +40000 ms: nothing, open; at the lift: reset, no close frame")


@row("silence, client close held", '{"fault":"silence","uid":"alice"}; alice pings and closes; lifted at +4000 ms')
def silence_close(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.mark()
    clock.fault(fault="silence", uid="alice")
    alice.send("ping")
    alice.close(1000)
    clock.at(4000)
    alice.pump()
    before = since_login(alice)
    clock.fault(fault="silence", uid="alice", enabled=False)
    alice.pump(lambda: alice.ended, WAIT)
    return (f"before the lift: {before}; at the lift: {labels(alice.frames[1:])}, then {alice.ending()}",
            "before the lift: nothing, open; at the lift: reply 2, then end of stream, close 1000")


@row("silence newConnections hang", '{"fault":"silence"} (everyone; new upgrades hang)')
def silence_hang_all(clock):
    clock.fault(fault="silence")
    clock.mark()
    peer = Peer(clock)
    clock.at(30000)
    peer.pump()
    before = upgrade_text(peer)
    clock.fault(fault="silence", enabled=False)
    peer.pump(lambda: peer.response, WAIT)
    return (f"new upgrade at +30000 ms: {before}; at the lift: {upgrade_text(peer)}",
            "new upgrade at +30000 ms: no answer; at the lift: 101")


@row("silence newConnections pass", '{"fault":"silence","uid":"alice","newConnections":"pass"}')
def silence_pass(clock):
    old = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="silence", uid="alice", newConnections="pass")
    old.send("ping")
    new = logged_in(clock, "alice", "alice-phone")
    ping = new.send("ping")
    new.pump(lambda: new.has_reply(ping), WAIT)
    old.pump()
    return (f"old socket: {since_login(old)}; new connection: 101, login ok, ping {labels(new.frames[1:])}",
            "old socket: nothing, open; new connection: 101, login ok, ping reply 2")


@row("silence uid, new login held", '{"fault":"silence","uid":"alice"} (newConnections hang); a new connection of alice')
def silence_hang_uid(clock):
    logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="silence", uid="alice")
    clock.mark()
    new = Peer(clock)
    new.pump(new.upgraded, WAIT)
    login = new.login("alice", "alice-phone")
    clock.at(9000)
    new.pump()
    before = labels(new.frames)
    clock.fault(fault="silence", uid="alice", enabled=False)
    new.pump(lambda: new.has_reply(login), WAIT)
    return (f"new: {upgrade_text(new)}; its login at +9000 ms: {before}; at the lift: {labels(new.frames)}",
            "new: 101; its login at +9000 ms: nothing; at the lift: reply 1")


@row("silence connection", '{"fault":"silence","connection":C} (alice-laptop\'s connection; alice-web open too)')
def silence_connection(clock):
    laptop = logged_in(clock, "alice", "alice-laptop")
    web = logged_in(clock, "alice", "alice-web", platform="web")
    clock.fault(fault="silence", connection=laptop.connection)
    laptop.send("ping")
    ping = web.send("ping")
    web.pump(lambda: web.has_reply(ping), WAIT)
    laptop.pump()
    return (f"alice-laptop: {labels(laptop.frames[1:])}; alice-web: {labels(web.frames[1:])}",
            "alice-laptop: nothing; alice-web: reply 2")


# ---- upgrade ----

def status_row(status, retry_after, body):
    @row(f"upgrade {status}", f'{{"fault":"upgrade","status":{status},"retryAfter":{retry_after},"body":"{body}"}}')
    def upgrade_status(clock):
        clock.fault(fault="upgrade", status=status, retryAfter=retry_after, body=body)
        peer = Peer(clock)
        peer.pump(lambda: peer.response or peer.ended, WAIT)
        return (upgrade_text(peer), f"HTTP {status} {HTTPStatus(status).phrase}, Retry-After: {retry_after}, "
                                    f"Content-Type: text/plain; charset=utf-8, body {body!r}, then end of stream")


for code, seconds, text in [(401, 0, "token expired"), (403, 0, "forbidden"), (429, 30, "slow down"),
                            (500, 1, "internal error"), (503, 5, "maintenance")]:
    status_row(code, seconds, text)


@row("upgrade status, no body", '{"fault":"upgrade","status":503}')
def upgrade_default_body(clock):
    clock.fault(fault="upgrade", status=503)
    peer = Peer(clock)
    peer.pump(lambda: peer.response or peer.ended, WAIT)
    return (upgrade_text(peer), "HTTP 503 Service Unavailable, Content-Type: application/json, "
                                "body '{\"error\":\"upgrade refused by a fault\"}', then end of stream")


@row("upgrade never", '{"fault":"upgrade","answer":"never"}, then DELETE /control/faults')
def upgrade_never(clock):
    clock.fault(fault="upgrade", answer="never")
    clock.mark()
    peer = Peer(clock)
    clock.at(60000)
    peer.pump()
    before = upgrade_text(peer)
    clock.call("DELETE", "/control/faults")
    peer.pump(lambda: peer.ended, WAIT)
    return (f"at +60000 ms: {before}; cleared: {upgrade_text(peer)}", "at +60000 ms: no answer; cleared: no HTTP response, reset")


@row("upgrade reset", '{"fault":"upgrade","answer":"reset"}')
def upgrade_reset(clock):
    clock.fault(fault="upgrade", answer="reset")
    peer = Peer(clock)
    peer.pump(lambda: peer.ended, WAIT)
    return upgrade_text(peer), "no HTTP response, reset"


@row("upgrade attempt", '{"fault":"upgrade","status":429,"attempt":2}')
def upgrade_attempt(clock):
    clock.fault(fault="upgrade", status=429, attempt=2)
    return f"3 upgrades: {', '.join(attempts(clock, 3))}", "3 upgrades: 101, 429, 101"


@row("upgrade times", '{"fault":"upgrade","status":503,"times":2}')
def upgrade_times(clock):
    clock.fault(fault="upgrade", status=503, times=2)
    return f"3 upgrades: {', '.join(attempts(clock, 3))}", "3 upgrades: 503, 503, 101"


@row("upgrade sharePercent", '{"fault":"upgrade","status":503,"sharePercent":30,"seed":4}, 20 upgrades, two servers')
def upgrade_share(clock):
    def refused(server):
        server.fault(fault="upgrade", status=503, sharePercent=30, seed=4)
        return [index for index, seen in enumerate(attempts(server, 20)) if seen == "503"]
    first_run = refused(clock)
    other = clock.another()
    try:
        second_run = refused(other)
    finally:
        other.stop()
    return (f"refused of 0-19: {first_run}; the same on a second server: {first_run == second_run}",
            "refused of 0-19: [4, 9, 10, 15, 17, 19]; the same on a second server: True")


def login_outcome(clock, device):
    """A new connection's login of alice on `device`: `ok`, or what came instead."""
    peer = Peer(clock)
    peer.pump(peer.upgraded, WAIT)
    login = peer.login("alice", device)
    peer.pump(lambda: peer.has_reply(login) or peer.ended, WAIT)
    outcome = "ok" if "result" in (peer.reply(login) or {}) else f"{labels(peer.frames)}, {peer.ending()}"
    peer.shut()
    return outcome


@row("upgrade deviceId attempt", '{"fault":"upgrade","deviceId":"alice-phone","answer":"reset","attempt":2}')
def upgrade_device(clock):
    clock.fault(fault="upgrade", deviceId="alice-phone", answer="reset", attempt=2)
    seen = [login_outcome(clock, "alice-phone"), login_outcome(clock, "alice-tablet"),
            login_outcome(clock, "alice-phone"), login_outcome(clock, "alice-phone")]
    return (f"phone 1: {seen[0]}; tablet: {seen[1]}; phone 2: {seen[2]}; phone 3: {seen[3]}",
            "phone 1: ok; tablet: ok; phone 2: nothing, reset, no close frame; phone 3: ok")


@row("upgrade uid never", '{"fault":"upgrade","uid":"bob","answer":"never"}')
def upgrade_login_never(clock):
    clock.fault(fault="upgrade", uid="bob", answer="never")
    clock.mark()
    bob = Peer(clock)
    bob.pump(bob.upgraded, WAIT)
    bob.login("bob", "bob-phone")
    clock.at(20000)
    bob.pump()
    silences = clock.call("GET", "/control/faults").get("silences", [])
    return (f"bob's login at +20000 ms: {labels(bob.frames)}, {bob.ending()}; silences listed: {len(silences)}",
            "bob's login at +20000 ms: nothing, open; silences listed: 1")


# ---- cut ----

def cut_row(how, expected_end):
    body = {"fault": "cut", "uid": "alice", "afterMs": 5000, **({"how": how} if how else {})}

    @row(f"cut afterMs {how or 'reset (default)'}", json.dumps(body, separators=(",", ":")))
    def cut(clock):
        alice = logged_in(clock, "alice", "alice-laptop")
        clock.mark()
        clock.fault(**body)
        when = first(clock, alice, lambda: alice.ended, [4999, 5000])
        return f"alice ends {when}: {alice.ending()}", f"alice ends +5000 ms: {expected_end}"


cut_row(None, "reset, no close frame")
cut_row("end", "end of stream, no close frame")


@row("cut afterMs silence", '{"fault":"cut","uid":"alice","afterMs":5000,"how":"silence"}')
def cut_silence(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.mark()
    clock.fault(fault="cut", uid="alice", afterMs=5000, how="silence")
    clock.at(5000)
    alice.send("ping")
    alice.pump()
    silences = [s.get("connection") for s in clock.call("GET", "/control/faults").get("silences", [])]
    return (f"after +5000 ms a ping: {since_login(alice)}; silence of its connection: {silences == [alice.connection]}",
            "after +5000 ms a ping: nothing, open; silence of its connection: True")


@row("cut afterBytes", '{"fault":"cut","uid":"alice","afterBytes":200,"how":"end"}')
def cut_bytes(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="cut", uid="alice", afterBytes=200, how="end")
    answered = 0
    while alice.ended is None and answered < 10:
        ping = alice.send("ping")
        alice.pump(lambda: alice.has_reply(ping) or alice.ended, WAIT)
        answered += alice.has_reply(ping)
        alice.pump(lambda: alice.ended)
    return f"pings answered: {answered}, then {alice.ending()}", "pings answered: 3, then end of stream, no close frame"


# ---- slowClose ----

@row("slowClose holdMs", '{"fault":"slowClose","uid":"alice","holdMs":3000}; alice closes')
def slow_close_hold(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="slowClose", uid="alice", holdMs=3000)
    clock.mark()
    alice.close(1000)
    echo = first(clock, alice, lambda: alice.close_code, [0])
    end = first(clock, alice, lambda: alice.ended, [2999, 3000])
    return f"close {alice.close_code} echoed {echo}; {alice.ending()} {end}", "close 1000 echoed +0 ms; end of stream, close 1000 +3000 ms"


@row("slowClose answerMs", '{"fault":"slowClose","uid":"alice","answerMs":2000}; alice closes')
def slow_close_answer(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="slowClose", uid="alice", answerMs=2000)
    clock.mark()
    alice.close(1000)
    echo = first(clock, alice, lambda: alice.close_code, [0, 1999, 2000])
    alice.pump(lambda: alice.ended, WAIT)
    return f"close echoed {echo}, then {alice.ending()}", "close echoed +2000 ms, then end of stream, close 1000"


# ---- latency ----

@row("latency", '{"fault":"latency","ms":300} (every connection, from its upgrade)')
def latency_all(clock):
    clock.fault(fault="latency", ms=300)
    clock.mark()
    peer = Peer(clock)
    upgraded = first(clock, peer, peer.upgraded, [599, 600])
    login = peer.login("alice", "alice-laptop")
    logged = first(clock, peer, lambda: peer.has_reply(login), [1199, 1200])
    ping = peer.send("ping")
    pong = first(clock, peer, lambda: peer.has_reply(ping), [1799, 1800])
    return f"101 {upgraded}; login reply {logged}; ping reply {pong}", "101 +600 ms; login reply +1200 ms; ping reply +1800 ms"


@row("latency uid", '{"fault":"latency","uid":"alice","ms":250}')
def latency_uid(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    bob = logged_in(clock, "bob", "bob-laptop")
    clock.fault(fault="latency", uid="alice", ms=250)
    clock.mark()
    bob_ping = bob.send("ping")
    bob_at = first(clock, bob, lambda: bob.has_reply(bob_ping), [0])
    ping = alice.send("ping")
    alice_at = first(clock, alice, lambda: alice.has_reply(ping), [499, 500])
    return f"alice's ping reply {alice_at}; bob's {bob_at}", "alice's ping reply +500 ms; bob's +0 ms"


@row("latency, then drop", '{"fault":"latency","uid":"alice","ms":300}, then {"fault":"drop","uid":"alice"}')
def latency_drop(clock):
    alice = logged_in(clock, "alice", "alice-laptop")
    clock.fault(fault="latency", uid="alice", ms=300)
    clock.mark()
    clock.fault(fault="drop", uid="alice")
    when = first(clock, alice, lambda: alice.ended, [0, 299, 300])
    return f"the reset reaches alice {when}: {alice.ending()}", "the reset reaches alice +300 ms: reset, no close frame"
