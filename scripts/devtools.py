"""A minimal client of Chromium's DevTools protocol, shared by the scripts that drive
headless Chromium (scripts/console-browser-test.py, scripts/probes/bench-console.py)."""
import asyncio
import json
import subprocess
import time
import urllib.request

import websockets

DEADLINE = 15.0


class DevTools:
    """A minimal DevTools protocol client: one WebSocket, requests by id, events queued."""

    def __init__(self, url):
        self.url, self.next_id, self.pending, self.events = url, 0, {}, []

    async def __aenter__(self):
        self.socket = await websockets.connect(self.url, max_size=64 << 20, ping_interval=None)
        self.reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *_):
        self.reader.cancel()
        await self.socket.close()

    async def _read(self):
        async for message in self.socket:
            data = json.loads(message)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            else:
                self.events.append(data)

    async def send(self, method, **params):
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, DEADLINE)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    async def eval(self, expression):
        result = await self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def until(self, expression, what, deadline=DEADLINE):
        """Waits for `expression` to be truthy in the page, up to `deadline` seconds."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            value = await self.eval(expression)
            if value:
                return value
            await asyncio.sleep(0.05)
        raise TimeoutError(f"the page never showed {what}")


def start_chromium(debug_port, profile, log, extra=(), url="about:blank", prefix=()):
    """Headless Chromium with its DevTools port open; returns the process and the first page's DevTools URL.
    `prefix` runs it under another command (`taskset -c 1`, `chrt --idle 0`), which all its processes inherit."""
    command = [*prefix, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--window-size=1400,900", f"--remote-debugging-port={debug_port}", f"--user-data-dir={profile}",
               *extra, url]
    browser = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{debug_port}/json/list", timeout=1) as response:
                pages = [t for t in json.load(response) if t["type"] == "page"]
            if pages:
                return browser, pages[0]["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("chromium did not open its DevTools port")
