#!/usr/bin/env python3
"""What one open web console costs the server (docs/BENCHMARKS.md, "The web console").

Runs `mockchat bench ping` (open loop, --rate pings/s over --connections) against a fresh
`mockchat serve` (the trace at its default settings: the console streams it) in three
setups, interleaved, --repeats times each:

  none     no console open (the base);
  console  the console page open in headless Chromium, streaming the load live;
  stalled  a viewer that opened the stream and never reads (a frozen or gone tab);
  reader   a viewer that reads the stream as fast as it comes (on core 0): the most a
           console can make the server write, with no browser beside the generator.

The server runs on core 1, the generator and Chromium on core 0 (`taskset`). Each run
writes the bench's JSON report; the summary gives the medians of p50, p99, p99.9, the
server CPU per ping and its RSS after the run, the page's received and skipped entries, and the ratio of
each setup's median p99 to that of `none`.

Usage: bench-console.py MOCKCHAT OUT_DIR [--repeats 3] [--rate 20000] [--connections 1000]
       [--duration 10] [--warmup 2]
"""
import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from devtools import DevTools, start_chromium  # noqa: E402


def settled_trace_seq(port):
    """The trace's last sequence number once the server has handled all it was sent."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/control/settle", data=b"", timeout=5) as response:
        return json.load(response)["traceSeq"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(mockchat, port):
    server = subprocess.Popen(["taskset", "-c", "1", mockchat, "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if "listening" not in server.stdout.readline():
        raise RuntimeError("the server did not start")
    return server


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def reading_viewer(port):
    """Opens the live stream and reads it as fast as it comes, on a thread; returns a byte counter."""
    viewer = stalled_viewer(port)
    counted = {"bytes": 0}

    def read():
        while True:
            try:
                data = viewer.recv(1 << 16)
            except OSError:
                return
            if not data:
                return
            counted["bytes"] += len(data)
    threading.Thread(target=read, daemon=True).start()
    return viewer, counted


def stalled_viewer(port):
    """Opens the live stream with the page's token and never reads from it."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/console", timeout=5) as response:
        page = response.read().decode()
    token = page.split('name="console-token" content="', 1)[1].split('"', 1)[0]
    viewer = socket.create_connection(("127.0.0.1", port))
    viewer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server queue fills soon
    viewer.sendall(f"GET /control/console/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"X-Console-Token: {token}\r\n\r\n".encode())
    return viewer


def rss_mib(pid):
    """The server's resident memory now (VmRSS), in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


def bench(mockchat, port, pid, args, report):
    command = ["taskset", "-c", "0", mockchat, "bench", "ping", "--server", f"127.0.0.1:{port}", "--server-pid", str(pid),
               "--connections", str(args.connections), "--rate", str(args.rate), "--duration", str(args.duration),
               "--warmup", str(args.warmup), "--json", report, "--no-progress"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(report) as f:
        return json.load(f)


def figure(report, key):
    """A figure of a bench JSON report, wherever it sits."""
    def walk(value):
        if isinstance(value, dict):
            if key in value:
                return value[key]
            for item in value.values():
                found = walk(item)
                if found is not None:
                    return found
        elif isinstance(value, list):
            for item in value:
                found = walk(item)
                if found is not None:
                    return found
        return None
    return walk(report)


async def run(mockchat, setup, args, out, index):
    port = free_port()
    server = start_server(mockchat, port)
    browser = viewer = None
    page_stats = {}
    try:
        report_path = os.path.join(out, f"{setup}-{index}.json")
        if setup == "console":
            debug_port = free_port()
            browser, page_url = start_chromium(debug_port, tempfile.mkdtemp(), os.path.join(out, "chromium.log"),
                                               ["--window-size=1400,900"], f"http://127.0.0.1:{port}/console")
            browser_pid = browser.pid
            subprocess.run(["taskset", "-a", "-p", "-c", "0", str(browser_pid)], stdout=subprocess.DEVNULL, check=False)
            async with DevTools(page_url) as page:
                await page.until("document.getElementById('stream-status')?.textContent === 'live'", "a live stream")
                report = bench(mockchat, port, server.pid, args, report_path)
                server_seq = settled_trace_seq(port)
                await page.until(f"window.mockchatConsole.lastSeq() >= {server_seq}",
                                 f"the stream reaching entry {server_seq}")
                page_stats = await page.eval("""({received: window.mockchatConsole.entries.length,
                    lastSeq: window.mockchatConsole.lastSeq(), skipped: window.mockchatConsole.skipped()})""")
        else:
            counted = None
            if setup == "stalled":
                viewer = stalled_viewer(port)
            elif setup == "reader":
                viewer, counted = reading_viewer(port)
            report = bench(mockchat, port, server.pid, args, report_path)
            if counted is not None:
                page_stats["streamedMiB"] = round(counted["bytes"] / (1 << 20), 1)
        page_stats["serverLastSeq"] = settled_trace_seq(port)
        page_stats["rssMiB"] = rss_mib(server.pid)
    finally:
        if viewer:
            viewer.close()
        if browser:
            stop(browser)
        stop(server)
    return report, page_stats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mockchat")
    parser.add_argument("out")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--setups", default="none,console,stalled,reader", help="which setups, in turn; the first is the base")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    setups = args.setups.split(",")
    rows = {setup: [] for setup in setups}
    for index in range(args.repeats):
        for setup in setups:
            report, stats = asyncio.run(run(args.mockchat, setup, args, args.out, index))
            row = {"p50": figure(report, "p50Micros"), "p99": figure(report, "p99Micros"),
                   "p999": figure(report, "p999Micros"), "cpu": figure(report, "serverCPUMicrosPerPing"),
                   "rate": figure(report, "achievedRate"), "sendLagP99": figure(report, "sendLagP99Micros"),
                   "busy": figure(report, "busyPercent"), **stats}
            rows[setup].append(row)
            print(f"{setup:8} run {index + 1}: {json.dumps(row)}", flush=True)
    summary = {}
    for setup in setups:
        def median(key):
            values = [r[key] for r in rows[setup] if isinstance(r.get(key), (int, float))]
            return statistics.median(values) if values else None
        summary[setup] = {key: median(key) for key in ["p50", "p99", "p999", "cpu", "rate", "rssMiB", "received", "skipped", "streamedMiB"]}
    base = summary[setups[0]]["p99"]
    for setup in setups:
        p99 = summary[setup]["p99"]
        summary[setup]["p99VsNone"] = round(p99 / base, 3) if p99 and base else None
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"args": vars(args), "runs": rows, "medians": summary}, f, indent=2)
    print("medians:", json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
