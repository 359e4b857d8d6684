#!/usr/bin/env python3
"""A hand-written Python mock of the protocol subset that `mockchat bench` uses.

This is the kind of mock a team writes in an afternoon with the `websockets`
package: asyncio, one coroutine per connection, `json` for every frame. It answers:

- `login`  -> {"id": ID, "result": {"connectionId": "cN", "serverTime": T}}; the user
              goes online, and every logged-in subscriber (presence mode other than
              "none") except the user's own connections gets `user.online`.
- `ping`   -> {"id": ID, "result": {"pong": true, "serverTime": T}}
- `logout` -> {"id": ID, "result": {}}, `user.offline` if it was the user's last
              connection, then close 1000 "logged out".
- any other op -> {"id": ID, "result": {}}

Events are encoded once and sent with `websockets.broadcast`.

Usage: mock.py [PORT [HOST]]. Port 0 picks a free port; the first stdout line is
"python mock listening on ws://HOST:PORT/v1/ws".
"""

import asyncio
import json
import resource
import signal
import sys
import time

import websockets
from websockets.asyncio.server import broadcast, serve


class Presence:
    """Who is online and who listens."""

    def __init__(self):
        self.online = {}  # uid -> number of logged-in connections
        self.subscribers = {}  # connection -> uid

    def user_json(self, uid, status):
        return {
            "uid": uid, "name": None, "avatar": None, "link": None, "role": None,
            "status": status, "statusMessage": None, "lastActiveAt": round(time.time(), 3),
            "hasBlockedMe": False, "blockedByMe": False, "deactivatedAt": 0.0,
            "tags": [], "metadata": {},
        }

    def announce(self, uid, status):
        frame = json.dumps({"event": "user." + status, "user": self.user_json(uid, status)},
                           separators=(",", ":"))
        broadcast([c for c, viewer in self.subscribers.items() if viewer != uid], frame)

    def came_online(self, connection, uid, subscribe):
        if subscribe:
            self.subscribers[connection] = uid
        self.online[uid] = self.online.get(uid, 0) + 1
        if self.online[uid] == 1:
            self.announce(uid, "online")

    def went_offline(self, connection, uid):
        self.subscribers.pop(connection, None)
        self.online[uid] -= 1
        if self.online[uid] == 0:
            del self.online[uid]
            self.announce(uid, "offline")


presence = Presence()
next_connection = 0


def reply(request_id, result):
    return json.dumps({"id": request_id, "result": result}, separators=(",", ":"))


async def session(websocket):
    global next_connection
    next_connection += 1
    connection_id = "c%d" % next_connection
    uid = None
    try:
        async for message in websocket:
            if not isinstance(message, str):
                continue
            try:
                request = json.loads(message)
            except ValueError:
                continue
            request_id = request.get("id")
            op = request.get("op")
            if op == "ping":
                await websocket.send(reply(request_id, {"pong": True, "serverTime": round(time.time(), 3)}))
            elif op == "login" and uid is None:
                uid = str(request.get("uid"))
                await websocket.send(reply(request_id, {"connectionId": connection_id,
                                                        "serverTime": round(time.time(), 3)}))
                mode = (request.get("presence") or {}).get("mode", "all")
                presence.came_online(websocket, uid, mode != "none")
            elif op == "logout":
                await websocket.send(reply(request_id, {}))
                if uid is not None:
                    presence.went_offline(websocket, uid)
                    uid = None
                await websocket.close(1000, "logged out")
                return
            else:
                await websocket.send(reply(request_id, {}))
    except websockets.ConnectionClosed:
        pass
    finally:
        if uid is not None:
            presence.went_offline(websocket, uid)


async def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8091
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    stop = asyncio.get_running_loop().create_future()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set_result, None)
    async with serve(session, host, port, compression=None, max_size=65536,
                     ping_interval=None, backlog=4096) as server:
        bound = server.sockets[0].getsockname()[1]
        print("python mock listening on ws://%s:%d/v1/ws" % (host, bound), flush=True)
        await stop


if __name__ == "__main__":
    asyncio.run(main())
