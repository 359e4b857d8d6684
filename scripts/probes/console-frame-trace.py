#!/usr/bin/env python3
"""Where an open console's frames go (docs/BENCHMARKS.md, "The views' reads and the page's
frames"): a DevTools trace of headless Chromium showing the console while `mockchat bench
ping` runs, summed per process, thread and event name.

The server and Chromium run on --server-core, the generator on --generator-core, as in
bench-console.py's `console@1` setup. The trace starts --warmup seconds into the load and
lasts --seconds. It prints the events that took the most time, each with its total
(thread time where Chromium gives it), its count, and the process and thread.

Usage: console-frame-trace.py MOCKCHAT [--seconds 5] [--alt-page-js FILE] [--top 45]
       [--thread CrRendererMain]
"""
import argparse
import asyncio
import collections
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from chat_wire import free_port  # noqa: E402
from devtools import DevTools, start_chromium  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_console", os.path.join(HERE, "bench-console.py"))
bench_console = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_console)

CATEGORIES = "devtools.timeline,disabled-by-default-devtools.timeline,cc,viz,blink,toplevel"


async def trace(args):
    server = bench_console.start_server(args.mockchat, args.server_core)
    port = server.port
    out = tempfile.mkdtemp()
    browser, page_url = start_chromium(free_port(), tempfile.mkdtemp(), os.path.join(out, "chromium.log"),
                                       ["--window-size=1400,900"], f"http://127.0.0.1:{port}/console",
                                       prefix=["taskset", "-c", str(args.server_core)])
    try:
        async with DevTools(page_url) as page:
            if args.alt_page_js:
                with open(args.alt_page_js) as f:
                    await bench_console.open_with_script(page, f"http://127.0.0.1:{port}/console", f.read())
            await page.until("document.getElementById('stream-status')?.textContent === 'live'", "a live stream")
            load = subprocess.Popen(["taskset", "-c", str(args.generator_core), args.mockchat, "bench", "ping",
                                     "--server", f"127.0.0.1:{port}", "--connections", "1000", "--rate", "20000",
                                     "--duration", str(args.seconds + args.warmup + 1), "--warmup", "2",
                                     "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await asyncio.sleep(args.warmup + 2)  # logins and the bench's own warm-up, then the trace
            await page.send("Tracing.start", categories=CATEGORIES, transferMode="ReportEvents")
            await asyncio.sleep(args.seconds)     # the traced window itself
            await page.send("Tracing.end")
            for _ in range(400):
                if any(e.get("method") == "Tracing.tracingComplete" for e in page.events):
                    break
                await asyncio.sleep(0.05)
            load.wait()
    finally:
        bench_console.stop(browser)
        server.stop()
    return [event for message in page.events if message.get("method") == "Tracing.dataCollected"
            for event in message["params"]["value"]]


def summary(events, top, thread):
    threads, processes = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
    total, count = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        key = (processes.get(e["pid"], e["pid"]), threads.get((e["pid"], e["tid"]), e["tid"]), e["name"])
        if thread and key[1] != thread:
            continue
        total[key] += e.get("tdur", e["dur"])
        count[key] += 1
    for key, micros in total.most_common(top):
        print(f"{micros / 1000:9.1f} ms {count[key]:6d}  {key[0]} / {key[1]} / {key[2]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mockchat")
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--warmup", type=float, default=2, help="seconds of load before the trace starts")
    parser.add_argument("--alt-page-js", help="the script the console page runs instead of its own")
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--thread", help="only this thread's events (e.g. CrRendererMain)")
    parser.add_argument("--server-core", type=int, default=1)
    parser.add_argument("--generator-core", type=int, default=0)
    args = parser.parse_args()
    summary(asyncio.run(trace(args)), args.top, args.thread)


if __name__ == "__main__":
    main()
