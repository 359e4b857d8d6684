#!/usr/bin/env python3
"""Three `mockchat serve --cluster` nodes over a real redis-server (docs/CLUSTER.md).

Starts redis-server on a free loopback port (no persistence) and three nodes, then
checks that the cluster behaves as one server: presence events cross nodes once,
a second mobile device on another node kicks the first, the reconnect-kick refusal,
two mobile logins racing on two nodes leave exactly one device (counted over many
races), users.get / users.list / control see cluster-wide state, reset clears the
cluster, two mobile devices allowed per user with logins over three nodes, a churn run counted per watcher, `kill -9` of a node, a node whose loop
stalled past its liveness TTL registers again, a Redis kill and restart, and Redis
outages of 0.3, 1 and 5 s (`--outages`) under login/logout churn, after each of which
both nodes rejoin and converge.
Every wait is on a condition with a deadline. The last line is
"cluster-test: N passed, F failed".

    scripts/cluster-test.py --mockchat .build/debug/mockchat
"""

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_wire import CheckFailed, ConnectionClosed, ControlClient, expect, free_port, open_socket  # noqa: E402
from chat_wire import login as login_frame, request as request_frame  # noqa: E402
from cluster_nodes import BANNER, node_command, redis_command, redis_ready  # noqa: E402

DEADLINE = 10.0  # seconds any single condition may take


async def wait_for(condition, what, timeout=DEADLINE):
    """Polls `condition` on the event loop until true or the deadline passes."""
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise CheckFailed(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.01)  # yields to the clients' readers; not a wait for an effect


class Process:
    """A child process whose stderr lines are collected as they arrive."""

    def __init__(self, name, proc):
        self.name = name
        self.proc = proc
        self.lines = []
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self):
        while True:
            line = await self.proc.stderr.readline()
            if not line:
                return
            self.lines.append(line.decode(errors="replace").rstrip())

    def count(self, pattern):
        return sum(1 for line in self.lines if re.search(pattern, line))

    async def kill(self, sig=signal.SIGKILL):
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
        await asyncio.wait_for(self.proc.wait(), DEADLINE)
        await self.reader


async def start_redis(port):
    proc = await asyncio.create_subprocess_exec(*redis_command(port, "verbose"), stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE)
    redis = Process("redis", proc)
    await wait_for(lambda: redis_ready(port), f"redis-server on port {port}")
    return redis


class Node:
    def __init__(self, name, process, url):
        self.name = name
        self.process = process
        self.url = url
        self.controller = ControlClient(url.replace("ws://", "http://").replace("/v1/ws", ""), timeout=DEADLINE)

    @classmethod
    async def start(cls, mockchat, name, redis_port, fixtures, ttl):
        proc = await asyncio.create_subprocess_exec(*node_command(mockchat, name, redis_port, fixtures, ttl),
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        banner = (await asyncio.wait_for(proc.stdout.readline(), DEADLINE)).decode()
        match = BANNER.match(banner)
        expect(match, f"node {name}: unexpected banner {banner!r}")
        asyncio.ensure_future(proc.stdout.read())  # drain the rest of the banner
        node = cls(name, Process(name, proc), match.group(1))
        await wait_for(lambda: node.process.count(r"cluster: node \S+ joined") == 1, f"node {name} to join Redis")
        return node

    def control(self, method, path, body=None):
        return self.controller.request(method, path, body)


class Client:
    """One logged-in (or refused) WebSocket session that records every frame."""

    def __init__(self, label, ws):
        self.label = label
        self.ws = ws
        self.frames = []
        self.close_code = None
        self.next_id = 1
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self):
        try:
            async for text in self.ws:
                self.frames.append(json.loads(text))
        except ConnectionClosed:
            pass
        self.close_code = self.ws.close_code

    @classmethod
    async def login(cls, node, uid, device, platform="desktop", presence="all", expect_ok=True, **extra):
        ws = await open_socket(node.url, DEADLINE)
        client = cls(f"{uid}/{device}@{node.name}", ws)
        await ws.send(login_frame(1, uid, device, platform, presence, **extra))
        await wait_for(lambda: client.reply(1) is not None, f"{client.label}: login reply")
        if expect_ok:
            expect("result" in client.reply(1), f"{client.label}: login failed: {client.reply(1)}")
        client.next_id = 2
        return client

    def reply(self, request_id):
        return next((f for f in self.frames if f.get("id") == request_id and "event" not in f), None)

    async def request(self, op, **fields):
        request_id = self.next_id
        self.next_id += 1
        await self.ws.send(request_frame(request_id, op, **fields))
        await wait_for(lambda: self.reply(request_id) is not None, f"{self.label}: reply to {op}")
        return self.reply(request_id)

    def presence(self, uids=None):
        """(uid, status) of every user.online / user.offline received, in order."""
        out = []
        for f in self.frames:
            if f.get("event") in ("user.online", "user.offline"):
                uid = f["user"]["uid"]
                if uids is None or uid in uids:
                    out.append((uid, f["event"].split(".")[1]))
        return out

    def events(self, name):
        return [f for f in self.frames if f.get("event") == name]

    async def closed(self):
        await asyncio.wait_for(self.reader, DEADLINE)
        return self.close_code

    async def close(self):
        await self.ws.close()
        await asyncio.wait_for(self.reader, DEADLINE)


def check_churn(label, uid, seen, cycles):
    """Every cycle's online then offline, once each, in order."""
    expected = ["online", "offline"] * cycles
    first = next((i for i, (a, b) in enumerate(zip(seen, expected)) if a != b), min(len(seen), len(expected)))
    expect(seen == expected,
           f"{label} saw {len(seen)} events for {uid}, expected {2 * cycles} alternating online/offline; "
           f"first difference at event {first}: {''.join('+' if s == 'online' else '-' for s in seen)}")


def check_churn_rejects_wrong_counts():
    """The churn checker fails on a duplicate, a loss and a swap: it can fail."""
    good = ["online", "offline"] * 3
    for wrong in (good + ["offline"], good[:-1], ["offline", "online"] + good[2:], good[:2] + ["online"] + good[2:]):
        try:
            check_churn("self-check", "x", wrong, 3)
        except CheckFailed:
            continue
        raise CheckFailed(f"the churn checker accepted {wrong}")
    check_churn("self-check", "x", good, 3)


async def barrier(nodes_watchers, marker_node, marker_uid):
    """Logs `marker_uid` in and out on `marker_node` and waits until every watcher has
    seen its offline: every presence event published before it has then arrived too.
    Each watcher pings first, which keeps it within the heartbeat timeout."""
    await asyncio.gather(*(w.request("ping") for w in nodes_watchers))
    before = {w.label: w.presence({marker_uid}).count((marker_uid, "offline")) for w in nodes_watchers}
    client = await Client.login(marker_node, marker_uid, "marker", presence="none")
    await client.request("logout")
    await client.closed()
    await wait_for(lambda: all(w.presence({marker_uid}).count((marker_uid, "offline")) == before[w.label] + 1
                               for w in nodes_watchers), f"every watcher to see {marker_uid}'s barrier")


async def logged_in_mobiles(nodes, uid):
    """The fields (`node/connection`) of `uid`'s logged-in mobile sessions, as each node reports its own."""
    held = []
    for node in nodes:
        for entry in node.control("GET", "/control/connections")["connections"]:
            if entry.get("node") == node.name and entry.get("uid") == uid and entry.get("platform") == "mobile" \
                    and entry.get("state") == "logged-in":
                held.append(f"{node.name}/{entry['id']}")
    return held


async def mobile_races(a, b, c, watchers, races):
    """Races two mobile logins of ivan, one on a and one on b, `races` times per mode:
    plain logins (the later one in Redis's order kicks the other: device.kicked, 4001)
    and reconnects asking not to kick (the later one is refused: 4004). Returns the
    outcome of every race; fails on any race that leaves more or less than one device."""
    outcomes = []
    for mode in ("kick", "refuse"):
        extra = {"reconnect": True, "reconnectKickEnable": True} if mode == "refuse" else {}
        for race in range(races):
            pair = await asyncio.gather(
                Client.login(a, "ivan", f"ivan-{mode}-{race}-a", platform="mobile", presence="none", expect_ok=False, **extra),
                Client.login(b, "ivan", f"ivan-{mode}-{race}-b", platform="mobile", presence="none", expect_ok=False, **extra))
            await barrier(watchers, c, "judy")
            held = await logged_in_mobiles([a, b], "ivan")
            survivors = [p for p in pair if "result" in p.reply(1)]
            outcome = (mode, len(held), "a" if held and held[0].startswith("a/") else "b")
            outcomes.append(outcome)
            if len(held) != 1:
                for p in pair:
                    if p.close_code is None:
                        await p.close()
                continue
            winner = next(p for p, node in zip(pair, "ab") if node == outcome[2])
            loser = pair[1] if winner is pair[0] else pair[0]
            code = await loser.closed()
            if mode == "kick":
                kicked = loser.events("device.kicked")
                expect(code == 4001 and len(kicked) == 1 and kicked[0]["byDeviceId"] == winner.label.split("/")[1].split("@")[0],
                       f"race {race}: the kicked device got {kicked} and close {code}")
            else:
                expect(survivors == [winner], f"race {race}: login replies {[p.reply(1) for p in pair]}")
                expect(loser.reply(1).get("error", {}).get("errorCode") == "ERR_RECONNECT_KICK_REFUSED" and code == 4004,
                       f"race {race}: the refused device got {loser.reply(1)} and close {code}")
            expect(winner.close_code is None, f"race {race}: the surviving device was closed with {winner.close_code}")
            await winner.request("logout")
            await winner.closed()
    await barrier(watchers, c, "judy")
    wrong = [o for o in outcomes if o[1] != 1]
    expect(not wrong, f"{len(wrong)} of {len(outcomes)} races did not leave exactly one mobile device: "
                      f"{describe_races(outcomes)}")
    for w in watchers:
        expect(w.presence({"ivan"}) == [("ivan", "online"), ("ivan", "offline")] * len(outcomes),
               f"{w.label} saw {len(w.presence({'ivan'}))} presence events of ivan for {len(outcomes)} races")
    return outcomes


async def two_mobiles_allowed(nodes):
    """With `mobileDevicesPerUser` 2 on every node: carol's phones p1@a and p2@b both stay;
    p3@c kicks p1@a (the oldest); p4@c kicks p2@b, not c's own newer p3. Ends with a
    reset, which brings back each node's own settings."""
    a, b, c = nodes
    for node in nodes:
        node.control("POST", "/control/fixtures", {"app": {"devicePolicy": {"mobileDevicesPerUser": 2}}})
    watcher = await Client.login(a, "trent", "w-two")
    phones = {}

    async def phone(name, node):
        phones[name] = await Client.login(node, "carol", f"carol-{name}", platform="mobile", presence="none")
        await barrier([watcher], node, "judy")

    def kicked_by(name, by):
        events = phones[name].events("device.kicked")
        return len(events) == 1 and events[0]["byDeviceId"] == f"carol-{by}" and phones[name].close_code == 4001

    await phone("p1", a)
    await phone("p2", b)
    held = sorted(await logged_in_mobiles(nodes, "carol"))
    expect(len(held) == 2 and phones["p1"].close_code is None and phones["p2"].close_code is None,
           f"two phones allowed: held {held}")
    await phone("p3", c)
    expect(await phones["p1"].closed() == 4001 and kicked_by("p1", "p3"),
           f"p3@c should kick p1@a: {phones['p1'].events('device.kicked')}, close {phones['p1'].close_code}")
    await phone("p4", c)
    expect(await phones["p2"].closed() == 4001 and kicked_by("p2", "p4"),
           f"p4@c should kick p2@b: {phones['p2'].events('device.kicked')}, close {phones['p2'].close_code}")
    await barrier([watcher], a, "judy")
    expect(phones["p3"].close_code is None and phones["p4"].close_code is None,
           f"the two newest phones on c should stay: p3 {phones['p3'].close_code}, p4 {phones['p4'].close_code}")
    held = await logged_in_mobiles(nodes, "carol")
    expect(len(held) == 2 and all(field.startswith("c/") for field in held), f"held after p4: {held}")
    expect(watcher.presence({"carol"}) == [("carol", "online")], f"carol's presence: {watcher.presence({'carol'})}")
    a.control("POST", "/control/reset", {})
    for client in [watcher, phones["p3"], phones["p4"]]:
        expect(await client.closed() == 4009, f"{client.label} closed with {client.close_code} on reset")


def describe_races(outcomes):
    """Counts of outcomes per mode, e.g. 'kick: 50 races, 1 survivor 50 (a 26, b 24)'."""
    parts = []
    for mode in ("kick", "refuse"):
        mine = [o for o in outcomes if o[0] == mode]
        if not mine:
            continue
        one = [o for o in mine if o[1] == 1]
        parts.append(f"{mode}: {len(mine)} races, exactly one survivor in {len(one)} "
                     f"(a {sum(o[2] == 'a' for o in one)}, b {sum(o[2] == 'b' for o in one)}), "
                     f"two survivors in {sum(o[1] == 2 for o in mine)}, none in {sum(o[1] == 0 for o in mine)}")
    return "; ".join(parts)


async def run(args, report):
    work = tempfile.mkdtemp(prefix="mockchat-cluster-")
    processes = []
    try:
        # Fixtures: the built-in users, and an app that lets clients choose not to kick.
        shutil.copy(os.path.join(args.fixtures, "users.json"), work)
        with open(os.path.join(args.fixtures, "app.json")) as f:
            app = json.load(f)
        app["clientKickControl"] = True
        with open(os.path.join(work, "app.json"), "w") as f:
            json.dump(app, f)

        check_churn_rejects_wrong_counts()
        report("the churn checker rejects a duplicate, a lost and a reordered event")

        redis_port = free_port()
        redis = await start_redis(redis_port)
        processes.append(redis)
        nodes = []
        for name in ("a", "b", "c"):
            nodes.append(await Node.start(args.mockchat, name, redis_port, work, args.ttl))
            processes.append(nodes[-1].process)
        a, b, c = nodes
        report("three nodes joined one redis-server")

        # Watchers: one per node, subscribed to everyone.
        watchers = [await Client.login(a, "trent", "w-a"), await Client.login(b, "peggy", "w-b"),
                    await Client.login(c, "mallory", "w-c")]
        await wait_for(lambda: all(w.presence({"mallory"}) == [("mallory", "online")] for w in watchers[:2]),
                       "the first watchers to see the last one")

        # 1. One online for alice on every node, none for her second device, one offline.
        alice = await Client.login(a, "alice", "alice-laptop")
        await wait_for(lambda: all(w.presence({"alice"}) == [("alice", "online")] for w in watchers),
                       "alice online on every node")
        alice_web = await Client.login(b, "alice", "alice-web", platform="web")
        got = await watchers[2].request("users.get", uid="alice")
        expect(got["result"]["user"]["status"] == "online", f"users.get on c: {got}")
        listed = await watchers[2].request("users.list", status="online", limit=100)
        online = {u["uid"] for u in listed["result"]["users"]}
        expect({"alice", "trent", "peggy"} <= online, f"users.list on c misses remote users: {online}")
        presence_c = c.control("GET", "/control/presence")["online"]
        expect("alice" in presence_c and "trent" in presence_c, f"control presence on c: {presence_c}")
        connections_c = c.control("GET", "/control/connections")["connections"]
        remote = [e for e in connections_c if e.get("uid") == "alice"]
        expect(sorted(e["node"] for e in remote) == ["a", "b"], f"control connections on c: {remote}")
        await alice.request("logout")
        await alice_web.request("logout")
        await barrier(watchers, b, "judy")
        for w in watchers:
            expect(w.presence({"alice"}) == [("alice", "online"), ("alice", "offline")],
                   f"{w.label} saw {w.presence({'alice'})}")
        got = await watchers[2].request("users.get", uid="alice")
        expect(got["result"]["user"]["status"] == "offline", f"users.get on c after logout: {got}")
        report("presence crosses nodes once per change; users.get/list and control are cluster-wide")

        # 2. A second mobile device on b kicks the one on a: device.kicked and 4001, no offline.
        phone1 = await Client.login(a, "bob", "bob-phone-1", platform="mobile")
        phone2 = await Client.login(b, "bob", "bob-phone-2", platform="mobile")
        code = await phone1.closed()
        expect(code == 4001, f"kicked device closed with {code}, expected 4001")
        kicked = phone1.events("device.kicked")
        expect(len(kicked) == 1 and kicked[0]["byDeviceId"] == "bob-phone-2", f"device.kicked: {kicked}")
        # 3. A reconnect asking not to kick is refused on c: ERR_RECONNECT_KICK_REFUSED and 4004.
        refused = await Client.login(c, "bob", "bob-phone-3", platform="mobile", expect_ok=False,
                                     reconnect=True, reconnectKickEnable=True)
        expect(refused.reply(1).get("error", {}).get("errorCode") == "ERR_RECONNECT_KICK_REFUSED",
               f"refusal: {refused.reply(1)}")
        expect(await refused.closed() == 4004, f"refused login closed with {refused.close_code}")
        expect(phone2.close_code is None, "the device on b was disturbed by the refused login")
        await barrier(watchers, c, "judy")
        for w in watchers:
            expect(w.presence({"bob"}) == [("bob", "online")], f"{w.label} saw {w.presence({'bob'})} for bob")
        report("cross-node kick (4001) and reconnect-kick refusal (4004)")

        # 3b. Two mobile logins of one user on two nodes at once: Redis decides, exactly one survives.
        outcomes = await mobile_races(a, b, c, watchers, args.races)
        report(f"mobile slot races on two nodes: {describe_races(outcomes)}")

        # 4. Reset on a closes every connection on every node and clears presence.
        a.control("POST", "/control/reset", {})
        for client in watchers + [phone2]:
            expect(await client.closed() == 4009, f"{client.label} closed with {client.close_code} on reset")
        for node in nodes:
            await wait_for(lambda: node.control("GET", "/control/presence")["online"] == [],
                           f"presence on {node.name} empty after reset")
        report("reset clears the cluster")

        # 4b. Two mobile devices allowed per user, logins spread over three nodes: the device
        # policy (DevicePolicy) keeps the two newest, kicking the oldest wherever it lives,
        # and a node never kicks its own newer phone while an older one lives elsewhere.
        await two_mobiles_allowed(nodes)
        report("two mobiles allowed over 3 nodes: the oldest is kicked wherever it lives, never a newer one")

        # 5. Churn: users log in and out on random nodes; every watcher counts every event.
        rng = random.Random(args.seed)
        watchers = [await Client.login(a, "trent", "w-a"), await Client.login(b, "peggy", "w-b"),
                    await Client.login(c, "mallory", "w-c")]
        await wait_for(lambda: all(w.presence({"mallory"}) == [("mallory", "online")] for w in watchers[:2]),
                       "the first watchers to see the last one after reset")
        churners = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]

        async def churn(uid):
            for cycle in range(args.cycles):
                node = rng.choice(nodes)
                client = await Client.login(node, uid, f"{uid}-d{cycle}", platform=rng.choice(["web", "desktop"]),
                                            presence="none")
                await client.request("ping")
                await client.request("logout")
                await client.closed()
        started = time.monotonic()
        await asyncio.gather(*(churn(uid) for uid in churners))
        await barrier(watchers, a, "judy")
        elapsed = time.monotonic() - started
        total = 0
        for w in watchers:
            for uid in churners:
                seen = [status for _, status in w.presence({uid})]
                check_churn(w.label, uid, seen, args.cycles)
                total += len(seen)
        report(f"churn: {len(churners)} users x {args.cycles} cycles over 3 nodes in {elapsed:.1f} s; "
               f"each of 3 watchers got each of {len(churners) * args.cycles * 2} events once, in order "
               f"({total} counted)")

        # 6. kill -9 of node c: each of its users goes offline on a and b exactly once, within the TTL.
        victims = ["carol", "dave", "erin"]
        on_c = [await Client.login(c, uid, f"{uid}-c") for uid in victims]
        await wait_for(lambda: all(w.presence({uid})[-1:] == [(uid, "online")] for w in watchers[:2] for uid in victims),
                       "c's users online everywhere")
        killed_at = time.monotonic()
        await c.process.kill(signal.SIGKILL)
        await wait_for(lambda: all(w.presence({uid})[-1:] == [(uid, "offline")] for w in watchers[:2] for uid in victims),
                       "c's users offline on a and b", timeout=args.ttl / 1000 + DEADLINE)
        detected = time.monotonic() - killed_at
        expect(detected <= args.ttl / 1000 + 0.5, f"offline {detected:.2f} s after kill -9, TTL {args.ttl} ms")
        await barrier(watchers[:2], b, "judy")
        for w in watchers[:2]:
            for uid in victims:
                count = w.presence({uid}).count((uid, "offline"))
                expect(count == args.cycles + 1, f"{w.label}: {uid} offline {count - args.cycles} times after the kill")
        report(f"kill -9 of a node: its 3 users offline on the others exactly once, after {detected:.2f} s "
               f"(TTL {args.ttl} ms)")

        # 7. Node b's loop stalls longer than its liveness key lives: a reaps b's users,
        # then b notices its expired key, registers again, and a sees them back.
        ivan = await Client.login(b, "ivan", "ivan-b")
        await wait_for(lambda: watchers[0].presence({"ivan"}) == [("ivan", "online")], "a to see ivan on b")
        stall_ms = 2 * args.ttl
        stalled_at = time.monotonic()
        stall = asyncio.ensure_future(asyncio.to_thread(b.control, "POST", "/control/debug/stall", {"ms": stall_ms}))
        await wait_for(lambda: watchers[0].presence({"ivan", "peggy"})[-2:] in
                       ([("ivan", "offline"), ("peggy", "offline")], [("peggy", "offline"), ("ivan", "offline")]),
                       "a to see b's users go offline during the stall", timeout=stall_ms / 1000 + DEADLINE)
        reaped = time.monotonic() - stalled_at
        await stall
        resumed_at = time.monotonic()
        await wait_for(lambda: all(watchers[0].presence({uid})[-1:] == [(uid, "online")] for uid in ("ivan", "peggy")),
                       "a to see b's users online again after b registered again")
        back = time.monotonic() - resumed_at
        await wait_for(lambda: b.process.count("liveness key of node b had expired") == 1,
                       "b to log once that its liveness key had expired")
        await barrier(watchers[:2], a, "judy")
        for uid in ("ivan", "peggy"):
            seen = [status for _, status in watchers[0].presence({uid})]
            expect(seen[-3:] == ["online", "offline", "online"], f"{watchers[0].label} saw {seen} for {uid}")
        expect(a.control("GET", "/control/presence")["online"] == b.control("GET", "/control/presence")["online"],
               "a and b disagree after b registered again")
        await ivan.request("logout")
        report(f"a {stall_ms} ms stall of node b: its users offline on a after {reaped:.2f} s, online again "
               f"{back * 1000:.0f} ms after the stall ended (b registered again)")

        # 8. Redis killed: nodes keep serving alone; restarted: they rejoin and converge,
        # each learning of the other's logins and logouts during the outage.
        await redis.kill(signal.SIGKILL)
        await wait_for(lambda: a.process.count("unreachable") >= 1 and b.process.count("unreachable") >= 1,
                       "a and b to log the outage")
        frank = await Client.login(a, "frank", "frank-a")
        await wait_for(lambda: watchers[0].presence({"frank"})[-1:] == [("frank", "online")],
                       "a's own watcher to see frank while Redis is down")
        grace = await Client.login(b, "grace", "grace-b")
        await grace.request("logout")
        bob = await Client.login(b, "bob", "bob-b")
        await wait_for(lambda: watchers[1].presence({"bob"})[-1:] == [("bob", "online")],
                       "b's own watcher to see bob while Redis is down")
        redis = await start_redis(redis_port)
        processes.append(redis)
        restarted_at = time.monotonic()
        await wait_for(lambda: a.process.count("reconnected") >= 1 and b.process.count("reconnected") >= 1,
                       "a and b to reconnect")
        await wait_for(lambda: watchers[1].presence({"frank"})[-1:] == [("frank", "online")]
                       and watchers[0].presence({"bob"})[-1:] == [("bob", "online")],
                       "each node to learn of the other's login during the outage")
        await wait_for(lambda: a.control("GET", "/control/presence")["online"]
                       == b.control("GET", "/control/presence")["online"], "a and b to agree on presence")
        converged = time.monotonic() - restarted_at
        online = a.control("GET", "/control/presence")["online"]
        expect(online == ["bob", "frank", "peggy", "trent"], f"presence after Redis restart: {online}")
        heidi = await Client.login(b, "heidi", "heidi-b")
        await wait_for(lambda: watchers[0].presence({"heidi"})[-1:] == [("heidi", "online")],
                       "a's watcher to see a login on b after the restart")
        report(f"Redis restart: nodes serve alone, log it, and agree {converged:.2f} s after it returns")

        # 8b. Outages of several lengths under churn: each node rejoins and converges.
        for seconds in args.outages:
            redis, converged = await outage_under_churn(a, b, watchers[:2], redis, redis_port, seconds, rng)
            processes.append(redis)
            report(f"Redis down {seconds:g} s under churn: both nodes rejoin and agree {converged:.2f} s after it "
                   f"returns; a logout during the outage retracted, a login during it shared")

        # 9. SIGTERM: a node's users go offline on the others at once, and it exits 0.
        await a.process.kill(signal.SIGTERM)
        expect(a.process.proc.returncode == 0, f"node a exited {a.process.proc.returncode} after SIGTERM")
        await wait_for(lambda: watchers[1].presence({"frank"})[-1:] == [("frank", "offline")],
                       "b to see a's users leave on SIGTERM", timeout=2)
        report("SIGTERM: the node's users leave the cluster at once; exit 0")
    finally:
        for process in processes:
            try:
                await process.kill(signal.SIGKILL)
            except Exception:
                pass
        shutil.rmtree(work, ignore_errors=True)
        failing = sys.exc_info()[0] is not None
        for process in processes:
            if process.name == "redis":
                for line in process.lines if failing else []:
                    print(f"cluster-test: redis-server (exit {process.proc.returncode}): {line}", file=sys.stderr)
                continue
            if any("Fatal" in line or "error:" in line.lower() for line in process.lines):
                print(f"cluster-test: log of node {process.name}:", file=sys.stderr)
                for line in process.lines[-30:]:
                    print("  | " + line, file=sys.stderr)
            elif failing:
                # What the node's cluster link went through, for the failure's diagnosis.
                for line in (line for line in process.lines if "cluster:" in line and "joined" not in line):
                    print(f"cluster-test: node {process.name}: {line}", file=sys.stderr)


async def outage_under_churn(a, b, watchers, redis, redis_port, seconds, rng):
    """Kills Redis for `seconds` while users log in and out on both nodes; meanwhile a
    user online on b before the outage logs out (a ghost on a until the rejoin) and one
    logs in on a (unknown to b until then). After the restart both nodes must log their
    reconnection and agree with what is really logged in. Returns the new redis-server
    and the seconds from its restart to agreement."""
    churners = ["carol", "dave", "erin", "grace"]
    stopping = asyncio.Event()

    async def churn(uid):
        cycle = 0
        while not stopping.is_set():
            client = await Client.login(rng.choice((a, b)), uid, f"{uid}-out{cycle}", platform="web", presence="none")
            await client.request("logout")
            await client.closed()
            cycle += 1
        return cycle
    # Who is online is cluster-wide; who receives whose presence is each node's own sessions.
    await wait_for(lambda: a.control("GET", "/control/presence")["online"] == b.control("GET", "/control/presence")["online"],
                   "a and b to agree before the outage")
    ghost = await Client.login(b, "ivan", f"ivan-ghost-{seconds:g}")
    await wait_for(lambda: watchers[0].presence({"ivan"})[-1:] == [("ivan", "online")], "a to see ivan on b")
    reconnects = [node.process.count("reconnected to Redis") for node in (a, b)]
    outages = [node.process.count("unreachable \\(") for node in (a, b)]
    churning = [asyncio.ensure_future(churn(uid)) for uid in churners]
    await redis.kill(signal.SIGKILL)
    killed_at = time.monotonic()
    await wait_for(lambda: all(node.process.count("unreachable \\(") > before for node, before in zip((a, b), outages)),
                   "a and b to log the outage")
    await ghost.request("logout")
    newcomer = await Client.login(a, "mallory", f"mallory-new-{seconds:g}")
    # The outage lasts `seconds`: watchers ping meanwhile to stay within the heartbeat timeout.
    while time.monotonic() - killed_at < seconds:
        await asyncio.sleep(min(1.0, max(0.0, seconds - (time.monotonic() - killed_at))))
        await asyncio.gather(*(w.request("ping") for w in watchers + [newcomer]))
    redis = await start_redis(redis_port)
    restarted_at = time.monotonic()
    await wait_for(lambda: all(node.process.count("reconnected to Redis") > before for node, before in zip((a, b), reconnects)),
                   f"a and b to reconnect after a {seconds:g} s outage")
    stopping.set()
    cycles = sum(await asyncio.gather(*churning))

    def held():
        """The users logged in on either node, each node asked about its own connections."""
        return sorted({entry["uid"] for node in (a, b) for entry in node.control("GET", "/control/connections")["connections"]
                       if entry.get("node") == node.name and entry.get("state") == "logged-in"})

    def agreed():
        expected = held()
        return all(node.control("GET", "/control/presence")["online"] == expected for node in (a, b))
    await wait_for(agreed, f"a and b to agree on {held()} after a {seconds:g} s outage "
                           f"(a: {a.control('GET', '/control/presence')['online']}, "
                           f"b: {b.control('GET', '/control/presence')['online']})")
    expected = held()
    expect("mallory" in expected and "ivan" not in expected, f"presence after the outage: {expected}")
    converged = time.monotonic() - restarted_at
    for uid in churners:
        expect(uid not in expected, f"{uid} still online after churn stopped: {expected}")
    await wait_for(lambda: watchers[0].presence({"ivan"})[-1:] == [("ivan", "offline")],
                   "a's watcher to see the ghost retracted")
    await wait_for(lambda: watchers[1].presence({"mallory"})[-1:] == [("mallory", "online")],
                   "b's watcher to see the login made during the outage")
    expect(cycles > 0, "no churn cycle completed")
    await newcomer.request("logout")
    await newcomer.closed()
    return redis, converged


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mockchat", default=".build/debug/mockchat")
    parser.add_argument("--fixtures", default="Fixtures")
    parser.add_argument("--ttl", type=int, default=1500, help="--node-ttl of every node, in ms")
    parser.add_argument("--cycles", type=int, default=25, help="login/logout cycles per churning user")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--races", type=int, default=50, help="mobile login races per mode")
    parser.add_argument("--outages", type=lambda text: [float(x) for x in text.split(",") if x], default=[0.3, 1, 5],
                        help="Redis outage lengths in seconds, comma-separated (default 0.3,1,5)")
    args = parser.parse_args()
    passed = []

    def report(line):
        passed.append(line)
        print(f"ok   {len(passed):2d} {line}", flush=True)
    failed = 0
    try:
        asyncio.run(run(args, report))
    except (CheckFailed, asyncio.TimeoutError, OSError) as error:
        failed = 1
        print(f"FAIL {len(passed) + 1:2d} {type(error).__name__}: {error}", flush=True)
    print(f"cluster-test: {len(passed)} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
