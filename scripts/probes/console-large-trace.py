#!/usr/bin/env python3
"""How large a trace the web console's page handles (docs/CONSOLE.md, "Testing").

Starts `mockchat serve` keeping --entries trace entries, fills the trace with ping loads,
opens the console in headless Chromium and measures the page on it: the time to read the
whole trace, its JavaScript heap, a search, a connection filter and a kind filter (each
to the next frame), the worst time to draw a scroll position, and the frame intervals
while mouse-wheel events scroll the timeline (scripts/console_timing.py). Prints one
JSON line per size.

Usage: console-large-trace.py MOCKCHAT [--entries 100000,250000,500000]
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import console_timing  # noqa: E402
from chat_wire import free_port  # noqa: E402
from devtools import DevTools, start_chromium  # noqa: E402


async def measure(mockchat, entries):
    port = free_port()
    # Room for every entry: the trace's memory bound would otherwise let the oldest go.
    server = subprocess.Popen([mockchat, "serve", "--port", str(port), "--trace-capacity", str(entries),
                               "--trace-memory", str(max(64, entries // 1000))],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    browser = None
    try:
        if "listening" not in server.stdout.readline():
            raise RuntimeError("the server did not start")
        kept = console_timing.fill_trace(mockchat, port, entries, deadline=600)
        browser, page_url = start_chromium(free_port(), tempfile.mkdtemp(), os.devnull, ["--window-size=1400,900"])
        async with DevTools(page_url) as page:
            started = time.monotonic()
            await page.send("Page.navigate", url=f"http://127.0.0.1:{port}/console")
            await page.until(f"window.mockchatConsole && window.mockchatConsole.lastSeq() >= {kept}",
                             "the whole trace", deadline=600)
            loaded = time.monotonic() - started
            timing = await console_timing.measure(page)
        with open("/proc/loadavg") as f:
            load = f.read().split()[0]
        return {"traceSeq": kept, "loadSeconds": round(loaded, 1), **timing, "loadAverage": load}
    finally:
        if browser:
            browser.terminate()
            browser.wait(timeout=10)
        server.terminate()
        server.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mockchat")
    parser.add_argument("--entries", default="100000,250000,500000")
    args = parser.parse_args()
    for entries in [int(n) for n in args.entries.split(",")]:
        print(json.dumps(asyncio.run(measure(args.mockchat, entries))), flush=True)


if __name__ == "__main__":
    main()
