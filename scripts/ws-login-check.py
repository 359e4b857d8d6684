#!/usr/bin/env python3
"""Logs alice in over a WebSocket at URL and checks the reply: the smallest proof that a
MockChat server answers (used by the clean-root, container and action checks)."""

import asyncio
import json
import sys

from websockets.asyncio.client import connect


async def main(url: str) -> None:
    async with connect(url, proxy=None) as ws:
        await ws.send(json.dumps({"id": 1, "op": "login", "uid": "alice", "authKey": "mockchat-dev-key",
                                  "deviceId": "check-1", "platform": "mobile"}))
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if reply.get("id") == 1:
                break
    user = (reply.get("result") or {}).get("user") or {}
    if user.get("uid") != "alice":
        sys.exit(f"ws-login-check: {url}: the login was not answered with alice: {reply}")
    print(f"ws-login-check: {url}: alice logged in ({user.get('name')})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
