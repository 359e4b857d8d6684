#!/usr/bin/env python3
"""A long, seeded session of many clients against `mockchat serve --clock virtual`.

It makes a recording to turn into a scenario and to shrink (docs/REPRODUCING-BUGS.md):

    mockchat serve --port 0 --clock virtual --record long.jsonl &
    scripts/record-session.py --url ws://127.0.0.1:PORT/v1/ws --seed 7 --actions 130

The same seed gives the same session, hence the same scenario from the recording (only
the order in which simultaneous closing handshakes complete may vary): every request
waits for its reply, clients log in on desktops and the web with devices of their own (so no
login kicks another), and the script closes no connection behind the server's back:
when a clock advance reaches a client's heartbeat timeout, it waits for that close.
Ends with "record-session: N actions, M frames sent".
"""

import argparse
import asyncio
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_wire import AUTH_KEY, ConnectionClosed, ControlClient, open_socket  # noqa: E402

USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
HEARTBEAT = 30.0


class Session:
    def __init__(self, url, seed, timeout):
        self.url = url
        self.control = ControlClient(url.replace("ws://", "http://").rsplit("/v1/ws", 1)[0], timeout=timeout)
        self.random = random.Random(seed)
        self.timeout = timeout
        self.clients = []  # [ws, uid, last activity, next id]
        self.now = 0.0
        self.devices = 0
        self.sent = 0

    async def request(self, client, frame):
        frame = {"id": client[3], **frame}
        client[3] += 1
        await client[0].send(json.dumps(frame))
        client[2] = self.now
        self.sent += 1
        while True:
            message = json.loads(await asyncio.wait_for(client[0].recv(), self.timeout))
            if message.get("id") == frame["id"]:
                return message

    async def login(self):
        ws = await open_socket(self.url, self.timeout)
        uid = self.random.choice(USERS)
        self.devices += 1
        client = [ws, uid, self.now, 1]
        presence = self.random.choice([{"mode": "all"}, {"mode": "all"}, {"mode": "friends"}])
        reply = await self.request(client, {"op": "login", "uid": uid, "authKey": AUTH_KEY,
                                            "deviceId": f"{uid}-device-{self.devices}",
                                            "platform": self.random.choice(["desktop", "web"]), "presence": presence})
        assert "result" in reply, reply
        self.clients.append(client)

    async def closed(self, client):
        """Waits until the server's close has arrived."""
        try:
            while True:
                await asyncio.wait_for(client[0].recv(), self.timeout)
        except ConnectionClosed:
            pass
        self.clients.remove(client)

    async def advance(self, seconds):
        self.control.advance(ms=int(seconds * 1000))
        self.now += seconds
        for client in [c for c in self.clients if self.now - c[2] >= HEARTBEAT]:
            await self.closed(client)

    async def step(self):
        choice = self.random.random()
        if not self.clients or choice < 0.25:
            await self.login()
            return
        client = self.random.choice(self.clients)
        if choice < 0.50:
            await self.request(client, {"op": "ping"})
        elif choice < 0.62:
            await self.request(client, {"op": "users.get", "uid": self.random.choice(USERS)})
        elif choice < 0.72:
            await self.request(client, {"op": "logout"})
            await self.closed(client)
        elif choice < 0.80:
            await client[0].close()
            self.clients.remove(client)
        else:
            await self.advance(self.random.choice([1, 2, 5, 10, 20]))

    async def run(self, actions):
        for _ in range(actions):
            await self.step()
        for client in list(self.clients):
            await client[0].close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="ws://127.0.0.1:PORT/v1/ws of a --clock virtual server")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--actions", type=int, default=130)
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for any frame")
    args = parser.parse_args()
    session = Session(args.url, args.seed, args.timeout)
    try:
        asyncio.run(session.run(args.actions))
    except (OSError, asyncio.TimeoutError, ConnectionClosed, AssertionError) as error:
        print(f"record-session: failed: {error!r}", file=sys.stderr)
        sys.exit(1)
    print(f"record-session: {args.actions} actions, {session.sent} frames sent")


if __name__ == "__main__":
    main()
