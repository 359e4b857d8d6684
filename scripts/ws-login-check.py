#!/usr/bin/env python3
"""Logs alice in over a WebSocket at URL and checks the reply: the smallest proof that a
MockChat server answers (used by the clean-root, container and action checks)."""

import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_wire import login, open_socket  # noqa: E402


async def main(url: str) -> None:
    ws = await open_socket(url, 10)
    try:
        await ws.send(login(1, "alice", "check-1", platform="mobile", presence=None))
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if reply.get("id") == 1:
                break
    finally:
        await ws.close()
    user = (reply.get("result") or {}).get("user") or {}
    if user.get("uid") != "alice":
        sys.exit(f"ws-login-check: {url}: the login was not answered with alice: {reply}")
    print(f"ws-login-check: {url}: alice logged in ({user.get('name')})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
