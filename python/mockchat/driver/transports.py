"""The two transports of docs/DRIVER.md: JSON lines on stdio, text frames on a WebSocket
the driver dials (`--connect URL`, for a harness started with `--sdk-listen`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
from typing import Callable, Optional, Sequence

from .adapter import Adapter
from .loop import Driver


def parse(text: str) -> dict:
    message = json.loads(text)
    if not isinstance(message, dict):
        raise ValueError("not an object")
    return message


def not_json(error: ValueError) -> dict:
    return {"type": "error", "message": f"not a JSON message: {error}"}


async def serve_stdio(adapter: Adapter) -> None:
    """One line of JSON per message on stdin and stdout, until stdin closes."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue = asyncio.Queue()

    def read_stdin() -> None:                  # a thread: stdin may be a pipe, a file or a terminal
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, "")
    threading.Thread(target=read_stdin, daemon=True).start()

    def write(message: dict) -> None:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    driver = Driver(adapter, write)
    write(adapter.hello())
    while line := await lines.get():
        try:
            message = parse(line)
        except ValueError as error:
            write(not_json(error))
            continue
        await driver.handle(message)
    driver.finish()


async def serve_websocket(adapter: Adapter, url: str) -> None:
    """Dials the harness at `url`; one text frame per message, until it closes."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    pending: list[str] = []
    driver = Driver(adapter, lambda message: pending.append(json.dumps(message, separators=(",", ":"))))
    try:
        async with connect(url, ping_interval=None, max_size=None, proxy=None) as ws:
            async def flush() -> None:
                while pending:
                    await ws.send(pending.pop(0))
            pending.append(json.dumps(adapter.hello(), separators=(",", ":")))
            await flush()
            async for text in ws:
                try:
                    await driver.handle(parse(text))
                except ValueError as error:
                    driver.write(not_json(error))
                await flush()
    except ConnectionClosed:
        pass                                   # the harness is done with us
    driver.finish()


def run(adapter_type: Callable[[], Adapter], argv: Optional[Sequence[str]] = None, description: str = "") -> None:
    """The driver's main: stdio by default, `--connect URL` for the WebSocket transport."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connect", metavar="URL", help="dial a harness started with --sdk-listen")
    options = parser.parse_args(argv)
    adapter = adapter_type()
    try:
        asyncio.run(serve_websocket(adapter, options.connect) if options.connect else serve_stdio(adapter))
    except KeyboardInterrupt:
        pass

