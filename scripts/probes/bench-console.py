#!/usr/bin/env python3
"""What one open web console costs the server (docs/BENCHMARKS.md, "The web console").

Runs `mockchat bench ping` (open loop, --rate pings/s over --connections) against a fresh
`mockchat serve` (the trace at its default settings: the console streams it) in setups
taken in turn, --repeats times each:

  none        no console open (the base);
  blank       headless Chromium open on about:blank (the browser's presence, no console);
  console     the console page open in headless Chromium, streaming the load live;
  altconsole  the same with the page's script replaced by --alt-page-js (another version
              of Console/console.js, to compare the page's own cost);
  stalled     a viewer that opened the stream and never reads (a frozen or gone tab);
  reader      a viewer that reads the stream as fast as it comes (a thread of this
              script, on the generator's core): the most a console makes the server write.
  statereads  no stream, only the page's reads of its state views every 2 s (clock,
              connections and presence as the page asks for them, `?limit=100`, and faults),
              from a thread of this script: what the views cost the server;
  wholereads  the same reads without the query: whole lists, as the page read them before.
  busy@CORE   no console: a process busy 20 ms of every second on CORE (2% of it), to show
              what any neighbour of that size does to the server's p99 on this machine.

A browser setup may say where Chromium runs: `console@1` on core 1, `console@0:idle`
on core 0 under SCHED_IDLE (`chrt --idle 0`: it gets only CPU no other task wants).
Chromium starts at normal priority (a browser under SCHED_IDLE on a busy machine may
never get to open its page) and every one of its processes and threads is put under
SCHED_IDLE once the page is open, before the bench; processes it starts later inherit
it. Without them it runs on the generator's core at normal priority. The server runs on --server-core, the generator (and this script) on
--generator-core.

Every run records the bench's figures (p50, p99, p99.9, server CPU per ping, the
generator's send lag p99 and its share of a core, the server's, both cores' busy share),
the server's RSS after the run and, with Chromium, the CPU its processes used in the
bench's window (all of them, and the renderer alone; /proc/PID/stat), as a share of a
core, in seconds and per 1,000 rows the page took, and the renderer's CPU seconds until
the page had every entry (a page that fell behind pays the rest after the window); for
a console, the rows the page holds, the entries it got inside routine records and those
it was told it missed. The summary (OUT_DIR/summary.json, with the load average at start
and end) gives the medians per setup, the range of p99, and each setup's median p99 over
that of the first setup and, for a console, over that of the `blank` setup with the same
placement and priority: the console's own effect. The last thing printed is the medians
as a Markdown table for docs/BENCHMARKS.md.

Usage: bench-console.py MOCKCHAT OUT_DIR [--repeats 3] [--rate 20000] [--connections 1000]
       [--duration 10] [--warmup 2] [--setups none,blank@1:idle,console@1:idle,reader,stalled]
       [--alt-page-js FILE]
"""
import argparse
import asyncio
import base64
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from chat_wire import ControlClient, free_port  # noqa: E402
from devtools import DevTools, start_chromium  # noqa: E402
from console_timing import settled_trace_seq  # noqa: E402
from mockchat_server import Server  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def start_server(mockchat, core):
    """`mockchat serve` on `core`, logging at its own level."""
    return Server(mockchat, prefix=["taskset", "-c", str(core)], log_level=None)


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def open_stream(port, receive_window=None):
    """Opens the live stream with the page's token; returns the socket."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/console", timeout=5) as response:
        page = response.read().decode()
    token = page.split('name="console-token" content="', 1)[1].split('"', 1)[0]
    viewer = socket.socket()
    if receive_window:
        viewer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_window)
    viewer.connect(("127.0.0.1", port))
    viewer.sendall(f"GET /control/console/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"X-Console-Token: {token}\r\n\r\n".encode())
    return viewer


def stalled_viewer(port):
    """A viewer that never reads, with a 4 KiB receive window: the server's queue fills soon."""
    return open_stream(port, receive_window=4096)


def reading_viewer(port):
    """A viewer that reads the stream as fast as it comes (the system's default window), on a
    thread; returns the socket and a byte counter."""
    viewer = open_stream(port)
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


def state_reader(port, query):
    """A thread reading the state views every 2 s as the page does; returns a stop event and
    the number of rounds read."""
    done, rounds = threading.Event(), {"count": 0}
    control = ControlClient.for_port(port, timeout=10)

    def read():
        while not done.wait(2.0):
            for path in ("/control/clock", "/control/connections" + query, "/control/presence" + query,
                         "/control/faults"):
                control.request("GET", path, raw=True)
            rounds["count"] += 1
    threading.Thread(target=read, daemon=True).start()
    return done, rounds


# 20 ms of work in every second, in user space.
BUSY_NEIGHBOUR = """import time
while True:
    start = time.monotonic()
    while time.monotonic() - start < 0.02:
        pass
    time.sleep(0.98)
"""


def process_tree(root):
    """`root` and its descendants: {pid: command line}."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(name))
        except (OSError, IndexError, ValueError):
            pass
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                tree[pid] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        todo += children.get(pid, [])
    return tree


def cpu_seconds(pid):
    """A process's user and system CPU so far, in seconds (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def browser_cpu(root):
    """CPU so far of Chromium's processes: {"all": s, "renderer": s}."""
    tree = process_tree(root)
    return {"all": sum(cpu_seconds(pid) for pid in tree),
            "renderer": sum(cpu_seconds(pid) for pid, command in tree.items() if "--type=renderer" in command)}


def bench(mockchat, port, pid, args, report):
    command = ["taskset", "-c", str(args.generator_core), mockchat, "bench", "ping", "--server", f"127.0.0.1:{port}",
               "--server-pid", str(pid), "--connections", str(args.connections), "--rate", str(args.rate),
               "--duration", str(args.duration), "--warmup", str(args.warmup), "--json", report, "--no-progress"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with open(report) as f:
        return json.load(f)


def figure(report, key):
    """A figure of a bench JSON report, wherever it sits."""
    if isinstance(report, dict):
        if key in report:
            return report[key]
        report = list(report.values())
    if isinstance(report, list):
        for item in report:
            found = figure(item, key)
            if found is not None:
                return found
    return None


def parse_setup(text, generator_core):
    """`console@1:idle` -> ("console", 1, True)."""
    name, _, rest = text.partition("@")
    core, _, policy = rest.partition(":")
    if ":" in name:
        name, policy = name.split(":", 1)
    return name, int(core) if core else generator_core, policy == "idle"


async def open_with_script(page, url, script):
    """Navigates to the console at `url` with its script replaced by `script` (the page's
    own nonce, token and headers kept), through the DevTools Fetch domain."""
    await page.send("Fetch.enable", patterns=[{"urlPattern": "*/console", "requestStage": "Response"}])
    # The navigation answers once the page commits, after the paused response goes on.
    navigation = asyncio.create_task(page.send("Page.navigate", url=url))
    for _ in range(300):
        paused = next((e for e in page.events if e.get("method") == "Fetch.requestPaused"), None)
        if paused:
            break
        await asyncio.sleep(0.05)
    else:
        raise RuntimeError("the console's response never came")
    request = paused["params"]
    body = await page.send("Fetch.getResponseBody", requestId=request["requestId"])
    html = base64.b64decode(body["body"]).decode() if body["base64Encoded"] else body["body"]
    head, rest = html.split("<script nonce=", 1)
    opening, _ = rest.split(">", 1)
    html = f"{head}<script nonce={opening}>{script}</script>\n</body>\n</html>\n"
    await page.send("Fetch.fulfillRequest", requestId=request["requestId"], responseCode=request["responseStatusCode"],
                    responseHeaders=request["responseHeaders"], body=base64.b64encode(html.encode()).decode())
    await navigation
    await page.send("Fetch.disable")


async def browser_run(mockchat, port, server, setup, args, out, report_path):
    """A bench run with Chromium open: on the console page (`console`), on the console with
    --alt-page-js's script (`altconsole`), or on about:blank (`blank`)."""
    name, core, idle = parse_setup(setup, args.generator_core)
    url = f"http://127.0.0.1:{port}/console" if name == "console" else "about:blank"
    browser, page_url = start_chromium(free_port(), tempfile.mkdtemp(), os.path.join(out, "chromium.log"),
                                       ["--window-size=1400,900"], url, prefix=["taskset", "-c", str(core)])
    stats = {}
    try:
        async with DevTools(page_url) as page:
            if name == "altconsole":
                with open(args.alt_page_js) as f:
                    await open_with_script(page, f"http://127.0.0.1:{port}/console", f.read())
            if name != "blank":
                await page.until("document.getElementById('stream-status')?.textContent === 'live'", "a live stream")
            if idle:
                for pid in process_tree(browser.pid):
                    subprocess.run(["chrt", "--all-tasks", "--idle", "-p", "0", str(pid)], check=False,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            before = browser_cpu(browser.pid)
            report = bench(mockchat, port, server.pid, args, report_path)
            after = browser_cpu(browser.pid)
            window = args.duration + args.warmup
            stats["browserCorePercent"] = round(100 * (after["all"] - before["all"]) / window, 1)
            stats["rendererCorePercent"] = round(100 * (after["renderer"] - before["renderer"]) / window, 1)
            stats["rendererCPUSeconds"] = round(after["renderer"] - before["renderer"], 2)
            if name != "blank":
                # What the page took in the window: its rows (entries, skip markers and
                # routine records), the entries it was sent inside routine records (a
                # page without them reports none) and those it was told it missed.
                stats.update(await page.eval("""({received: window.mockchatConsole.entries.length,
                    coalesced: window.mockchatConsole.coalesced ? window.mockchatConsole.coalesced() : 0,
                    skipped: window.mockchatConsole.skipped()})"""))
                if stats["received"]:
                    stats["rendererMsPer1k"] = round(1e6 * (after["renderer"] - before["renderer"]) / stats["received"], 1)
                    stats["browserMsPer1k"] = round(1e6 * (after["all"] - before["all"]) / stats["received"], 1)
                server_seq = settled_trace_seq(port)
                await page.until(f"window.mockchatConsole.lastSeq() >= {server_seq}",
                                 f"the stream reaching entry {server_seq}", deadline=120)
                # The renderer's CPU from the load's start until the page has it all: a
                # page that fell behind pays the rest after the window.
                caught_up = browser_cpu(browser.pid)
                stats["rendererCPUSecondsToCatchUp"] = round(caught_up["renderer"] - before["renderer"], 2)
    finally:
        stop(browser)
    return report, stats


async def run(mockchat, setup, args, out, index):
    server = start_server(mockchat, args.server_core)
    port = server.port
    viewer, neighbour, stats = None, None, {}
    report_path = os.path.join(out, f"{setup.replace(':', '-')}-{index}.json")
    try:
        if parse_setup(setup, 0)[0] in ("console", "altconsole", "blank"):
            report, stats = await browser_run(mockchat, port, server, setup, args, out, report_path)
        else:
            counted, reads = None, None
            name, core, _ = parse_setup(setup, args.server_core)
            if name == "busy":
                neighbour = subprocess.Popen(["taskset", "-c", str(core), sys.executable, "-c", BUSY_NEIGHBOUR])
            elif setup in ("statereads", "wholereads"):
                reads = state_reader(port, "?limit=100" if setup == "statereads" else "")
            elif setup == "stalled":
                viewer = stalled_viewer(port)
            elif setup == "reader":
                viewer, counted = reading_viewer(port)
            report = bench(mockchat, port, server.pid, args, report_path)
            if counted is not None:
                stats["streamedMiB"] = round(counted["bytes"] / (1 << 20), 1)
            if reads is not None:
                reads[0].set()
                stats["stateReads"] = reads[1]["count"]
        stats["rssMiB"] = round(server.rss_kib() / 1024, 1)
    finally:
        if viewer:
            viewer.close()
        if neighbour:
            stop(neighbour)
        server.stop()
    return report, stats


STATS = ["rssMiB", "stateReads", "received", "coalesced", "skipped", "streamedMiB", "browserCorePercent", "rendererCorePercent",
         "rendererCPUSeconds", "rendererCPUSecondsToCatchUp", "rendererMsPer1k", "browserMsPer1k"]

FIGURES = {"p50": "p50Micros", "p99": "p99Micros", "p999": "p999Micros", "cpu": "serverCPUMicrosPerPing",
           "rate": "achievedRate", "sendLagP99": "sendLagP99Micros", "generatorCorePercent": "generatorCorePercent",
           "serverCorePercent": "serverCorePercent", "busy": "busyPercent"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mockchat")
    parser.add_argument("out")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rate", type=int, default=20000)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=2)
    parser.add_argument("--server-core", type=int, default=1)
    parser.add_argument("--generator-core", type=int, default=0)
    parser.add_argument("--alt-page-js", help="the script `altconsole` setups run in the console page instead of its own")
    parser.add_argument("--setups", default="none,blank@1:idle,console@1:idle,reader,stalled",
                        help="which setups, in turn; the first is the base")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.sched_setaffinity(0, {args.generator_core})  # the reader thread and the DevTools client
    setups = args.setups.split(",")
    rows = {setup: [] for setup in setups}
    with open("/proc/loadavg") as f:
        load_at_start = f.read().split()[:3]
    for index in range(args.repeats):
        for setup in setups:
            report, stats = asyncio.run(run(args.mockchat, setup, args, args.out, index))
            row = {key: figure(report, name) for key, name in FIGURES.items()} | stats
            rows[setup].append(row)
            print(f"{setup:16} run {index + 1}: {json.dumps(row)}", flush=True)
    summary = {}
    for setup in setups:
        summary[setup] = {}
        for key in list(FIGURES) + STATS:
            values = [r[key] for r in rows[setup] if isinstance(r.get(key), (int, float))]
            summary[setup][key] = statistics.median(values) if values else None
        summary[setup]["p99Range"] = [min(r["p99"] for r in rows[setup]), max(r["p99"] for r in rows[setup])]
    base = summary[setups[0]]["p99"]
    for setup in setups:
        p99 = summary[setup]["p99"]
        summary[setup]["p99VsBase"] = round(p99 / base, 3) if p99 and base else None
        kind = setup.split("@")[0].split(":")[0]
        twin = "blank" + setup[len(kind):] if kind in ("console", "altconsole") else None
        if twin in summary and summary[twin]["p99"]:
            summary[setup]["p99VsBlank"] = round(p99 / summary[twin]["p99"], 3)
    with open("/proc/loadavg") as f:
        load_at_end = f.read().split()[:3]
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"args": vars(args), "loadAverage": {"start": load_at_start, "end": load_at_end},
                   "runs": rows, "medians": summary}, f, indent=2)
    print(f"load average at start {' '.join(load_at_start)}, at end {' '.join(load_at_end)}")
    print("medians:", json.dumps(summary, indent=2))
    print(table(setups, rows, summary))


def table(setups, rows, summary):
    """The medians as a Markdown table, the figures that say whether a run measured the
    server (the generator's send lag) beside its p99, and the CPU of each party."""
    def cell(value, digits=0):
        return "" if value is None else f"{value:,.{digits}f}"
    def spread(setup, key):
        values = [r[key] for r in rows[setup] if isinstance(r.get(key), (int, float))]
        return f"{min(values):,.0f}–{max(values):,.0f}" if values else ""
    lines = ["| setup | p50 (µs) | p99 (µs) | p99 range (µs) | p99 / first | p99 / blank | generator send lag p99 (µs) "
             "| server % of a core | renderer % of a core | renderer CPU s | page rows / coalesced / skipped | reader MiB |",
             "|---" * 12 + "|"]
    for setup in setups:
        m = summary[setup]
        page = "" if m["received"] is None else f"{cell(m['received'])} / {cell(m['coalesced'])} / {cell(m['skipped'])}"
        lines.append(f"| {setup} | {cell(m['p50'])} | {cell(m['p99'])} | {spread(setup, 'p99')} | {cell(m['p99VsBase'], 2)} "
                     f"| {cell(m.get('p99VsBlank'), 2)} | {spread(setup, 'sendLagP99')} | {cell(m['serverCorePercent'], 1)} "
                     f"| {cell(m['rendererCorePercent'], 1)} | {cell(m['rendererCPUSeconds'], 2)} | {page} "
                     f"| {cell(m['streamedMiB'], 1)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
