#!/usr/bin/env python3
"""Reruns the eight reproductions of issue 26 and its smaller items against real
`mockchat serve` / `mockchat test` processes and prints a pass/fail table with the
figure of each (docs/ROBUSTNESS.md, "Issue 26 reproductions, rerun").

Usage: scripts/probes/reproductions.py [MOCKCHAT_BINARY] [--skip-cluster | --only-smaller]
(`make robustness-probe`; a few minutes: the Redis outages alone take 36 s and more.)
"""
import asyncio, http.client, json, os, re, signal, subprocess, sys, tempfile, time

import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from chat_wire import close_code, free_port, login as login_frame, open_socket, request  # noqa: E402

from mockchat_server import Server  # noqa: E402

argv = sys.argv
BINARY = next((a for a in argv[1:] if not a.startswith("--")), ".build/debug/mockchat")
rows = []


def row(name, passed, figure):
    rows.append((name, passed, figure))
    print(f"{'pass' if passed else 'FAIL'}  {name}: {figure}", flush=True)


def run(arguments, timeout=120, **options):
    return subprocess.run([BINARY, *arguments], capture_output=True, text=True, timeout=timeout, **options)


async def logged_in(server, uid, device):
    ws = await open_socket(server.url, 30, max_size=None)
    await ws.send(login_frame(1, uid, device, presence="none"))
    await ws.recv()
    return ws


def cluster_outages():
    """1. Redis outages of 0.3, 1, 5 and 30 s under churn: scripts/cluster-test with a real redis-server."""
    started = time.monotonic()
    result = subprocess.run([os.path.join(ROOT, "scripts", "cluster-test"), "--outages", "0.3,1,5,30"], cwd=ROOT,
                            capture_output=True, text=True, timeout=900, env=dict(os.environ, MOCKCHAT=BINARY))
    found = re.findall(r"Redis down ([\d.]+) s under churn: both nodes rejoin and agree ([\d.]+) s", result.stdout)
    figures = ", ".join(f"{down} s down: agreed {agreed} s after Redis returned" for down, agreed in found)
    row("1 cluster rejoins after Redis outages", result.returncode == 0 and len(found) == 4,
        f"{figures or result.stdout[-300:]} ({time.monotonic() - started:.0f} s in all)")


async def clock_bodies():
    """2. Control bodies of 1e308 (and 1e16, -1e308, 1e17) to a virtual-clock server."""
    server = Server(BINARY, "--clock", "virtual")
    ws = await logged_in(server, "alice", "a")
    bodies = [("/control/clock/advance", {"seconds": 1e308}), ("/control/clock/advance", {"seconds": 1e16}),
              ("/control/clock/advance", {"seconds": -1e308}), ("/control/reset", {"clock": 1e308}),
              ("/control/reset", {"clock": 1e17})]
    statuses = [server.control("POST", path, body)[0] for path, body in bodies]
    await ws.send(request(2, "ping"))
    answered = "result" in json.loads(await ws.recv())
    alive = server.process.poll() is None
    await ws.close()
    server.stop()
    row("2 1e308 clock bodies", statuses == [400] * 5 and answered and alive,
        f"statuses {statuses}; the session's ping answered: {answered}; the process alive: {alive}")


def rebind_host():
    """3. Host and Origin of 127.0.0.1.rebind.attacker.example."""
    server = Server(BINARY)
    results = []
    for header, value in [("Host", "127.0.0.1.rebind.attacker.example"), ("Host", f"127.0.0.1.rebind.attacker.example:{server.port}"),
                          ("Origin", "http://127.0.0.1.rebind.attacker.example"), ("Host", "localhost.attacker.example")]:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        headers = {"Content-Type": "application/json", header: value}
        connection.putrequest("POST", "/control/faults", skip_host=header == "Host")
        for name, text in headers.items():
            connection.putheader(name, text)
        body = json.dumps({"fault": "refuseConnections"}).encode()
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        results.append(connection.getresponse().status)
        connection.close()
    faults = json.loads(server.control("GET", "/control/faults")[1])
    server.stop()
    unchanged = not faults.get("refuseConnections")
    row("3 127.x.rebind Host/Origin", results == [403] * 4 and unchanged, f"statuses {results}; faults unchanged: {unchanged}")


async def trace_memory():
    """4. Pings carrying 2,000 zeros until the trace cap; RSS before and after reset."""
    server = Server(BINARY)
    ws = await logged_in(server, "alice", "a")
    start = server.rss_kib()
    zeros = [0] * 2000
    count = 20_000
    for index in range(count):
        await ws.send(json.dumps({"id": index, "op": "ping", "pad": zeros}))
        await ws.recv()
    grown = server.rss_kib() - start
    server.control("POST", "/control/reset", {})
    after = server.rss_kib() - start
    await ws.close()
    server.stop()
    row("4 trace memory of 2,000-zero pings", grown < 200 * 1024 and after < 8 * 1024,
        f"{count:,} pings: RSS +{grown / 1024:.1f} MiB (review: +1,460 MiB); after reset +{after / 1024:.1f} MiB (review: 788 MiB)")


async def held_frames():
    """5. A link holding alice's frames for 60 s while 50,000-byte events are pushed to her."""
    server = Server(BINARY, "--clock", "virtual")
    ws = await logged_in(server, "alice", "a")
    start = server.rss_kib()
    server.control("POST", "/control/faults", {"fault": "link", "uid": "alice", "direction": "out", "delayMs": 60000})
    pushes, code = 0, None
    pad = "x" * 50_000
    while pushes < 200:
        status, _ = server.control("POST", "/control/push", {"uid": "alice", "event": {"event": "x", "pad": pad}})
        if status != 200:
            break
        pushes += 1
        sessions = json.loads(server.control("GET", "/control/connections")[1])["connections"]
        if not any(entry.get("uid") == "alice" and entry.get("state") == "logged-in" for entry in sessions):
            break
    held = server.rss_kib() - start
    server.control("POST", "/control/clock/advance", {"seconds": 61})
    try:
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    except websockets.exceptions.ConnectionClosed as closed:
        code = close_code(closed)
    except asyncio.TimeoutError:
        code = "none within 10 s"
    server.control("POST", "/control/reset", {})
    after = server.rss_kib() - start
    server.stop()
    row("5 held frames bounded", code == 4008 and pushes < 40,
        f"session ended after {pushes} pushes of 50,000 bytes, close {code}; RSS +{held / 1024:.1f} MiB while held, "
        f"+{after / 1024:.1f} MiB after the reset")


def bad_cluster_flags():
    """6. Bad --cluster / --node values."""
    cases = [["--cluster", "http://x", "--node", "a"], ["--cluster", "redis://", "--node", "a"],
             ["--cluster", "redis://127.0.0.1:99999", "--node", "a"], ["--cluster", "redis://127.0.0.1:6379", "--node", "a/b"],
             ["--cluster", "redis://127.0.0.1:6379", "--node", ""]]
    statuses = [run(["serve", "--port", "0", *case], timeout=30).returncode for case in cases]
    row("6 bad --cluster/--node", statuses == [64] * 5, f"exit statuses {statuses} (review: 132)")


def from_trace():
    """7. scenarios from-trace with a time of 1e308 in the header and in an entry."""
    statuses, messages = [], []
    header = {"format": "mockchat-trace", "version": 1, "clock": "virtual", "start": 1700000000.0, "fixtures": {}}
    entry = {"seq": 1, "t": 1700000000.0, "kind": "open", "conn": "c1", "text": "127.0.0.1"}
    for broken_header, broken_entry in [({"start": 1e308}, {}), ({}, {"t": 1e308})]:
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as file:
            file.write(json.dumps({**header, **broken_header}) + "\n" + json.dumps({**entry, **broken_entry}) + "\n")
        result = run(["scenarios", "from-trace", file.name], timeout=60)
        os.unlink(file.name)
        statuses.append(result.returncode)
        messages.append(result.stderr.strip().splitlines()[-1][:90] if result.stderr.strip() else "")
    row("7 from-trace with 1e308", statuses == [1, 1] and all(":1:" in m or ":2:" in m for m in messages),
        f"exit {statuses} (review: 132); {messages[1]}")


def drivers():
    """8. Drivers that ignore SIGTERM, and a driver's child that keeps stdout open."""
    bad = os.path.join(ROOT, "Tests/ConformanceHarnessTests/Fixtures/drivers/bad-driver.py")
    text = open(os.path.join(ROOT, "Tests/ConformanceHarnessTests/Fixtures/driver-init.yaml")).read()
    figures, passed = [], True
    for mode in ["ignores-term", "child-holds-stdout"]:
        with tempfile.TemporaryDirectory() as folder:
            os.mkdir(f"{folder}/s")
            for index in range(6):
                with open(f"{folder}/s/i{index}.yaml", "w") as file:
                    file.write(text.replace("id: harness/driver-init", f"id: harness/driver-init-{index}"))
            pids = f"{folder}/pids"
            open(pids, "w").close()
            started = time.monotonic()
            result = run(["test", f"{folder}/s", "--sdk", f"python3 {bad} {mode}", "--jobs", "2"],
                         timeout=300, env=dict(os.environ, MOCKCHAT_TEST_PIDS=pids))
            seconds = time.monotonic() - started
            written = [int(p) for p in open(pids).read().split()]
            left = [p for p in written if os.path.exists(f"/proc/{p}") and
                    open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            passed = passed and not left and result.returncode == 0
            figures.append(f"{mode}: {len(left)} of {len(written)} left, run {seconds:.1f} s")
    row("8 drivers reaped", passed, "; ".join(figures) + " (review: 6 of 6 left, 12 processes)")


async def smaller_items():
    """The smaller items: --trace /dev/full, --trace-memory 2^44, a broken login frame's authKey,
    close codes 1012-1014."""
    port = free_port()
    full = subprocess.Popen([BINARY, "serve", "--port", str(port), "--log-level", "error", "--trace", "/dev/full"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    full.stdout.readline()
    ws_full = await open_socket(f"ws://127.0.0.1:{port}/v1/ws", 30)
    await ws_full.send(login_frame(1, "alice", "a", presence="none"))
    await ws_full.recv()
    await ws_full.close()
    full.send_signal(signal.SIGTERM)
    _, errors = full.communicate(timeout=30)
    reported = b"No space left on device" in errors
    server = Server(BINARY)
    ws = await logged_in(server, "alice", "a")
    await ws.send('{"id": 1, "op": "login", "authKey": "mockchat-dev-key", "token": "secret-token", ')
    await ws.recv()
    _, trace = server.control("GET", "/control/trace")
    in_clear = "mockchat-dev-key" in trace or "secret-token" in trace
    codes = []
    for code in (1012, 1013, 1014):
        other = await logged_in(server, "bob", f"b{code}")
        await other.close(code=code)
        codes.append(other.close_code)
    await ws.close()
    server.stop()
    memory = run(["serve", "--port", "0", "--trace-memory", "17592186044416"], timeout=30).returncode
    row("smaller: --trace /dev/full reported", reported, f"stderr names the failure: {reported}")
    row("smaller: --trace-memory 2^44 MiB", memory == 64, f"exit {memory}")
    row("smaller: broken login frame redacted", not in_clear, f"key or token in GET /control/trace: {in_clear}")
    row("smaller: close 1012/1013/1014 echoed", codes == [1012, 1013, 1014], f"echoed codes {codes}")


async def main():
    if "--only-smaller" in argv:
        return await smaller_items()
    if "--skip-cluster" not in argv:
        cluster_outages()
    await clock_bodies()
    rebind_host()
    await trace_memory()
    await held_frames()
    bad_cluster_flags()
    from_trace()
    drivers()
    await smaller_items()
    print("\n| reproduction | result | figure |\n|---|---|---|")
    for name, passed, figure in rows:
        print(f"| {name} | {'pass' if passed else 'FAIL'} | {figure} |")
    failed = sum(1 for _, passed, _ in rows if not passed)
    print(f"\nreproductions: {len(rows) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
