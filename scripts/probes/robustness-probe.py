#!/usr/bin/env python3
"""Measures the security and resilience figures of docs/ROBUSTNESS.md (rows 31-35)
against a real `mockchat serve` process on loopback.

Usage: scripts/probes/robustness-probe.py [MOCKCHAT_BINARY]   (default .build/debug/mockchat)

Every probe starts its own server on a free port and stops it with SIGTERM. The stall
probe needs a debug build (the stall route exists only there).
"""
import asyncio, json, os, sys, time

import websockets

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from chat_wire import login as login_frame, open_socket  # noqa: E402
from mockchat_server import Server  # noqa: E402

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/mockchat"


async def login(url, uid, device):
    ws = await open_socket(url, 30, max_size=None)
    await ws.send(login_frame(1, uid, device, presence="none"))
    await ws.recv()
    return ws


async def cap_probe():
    """Sockets that never log in, until the server refuses: then the control API."""
    server = Server(BINARY, nofile=512)
    held, refused = [], None
    while refused is None and len(held) < 2000:
        try:
            held.append(await websockets.connect(server.url))
        except websockets.exceptions.InvalidStatus as error:
            refused = error.response.status_code
    fds = server.descriptors()
    started = time.perf_counter()
    status, _ = server.control("GET", "/control/health")
    control_ms = (time.perf_counter() - started) * 1000
    for ws in held:
        await ws.close()
    server.stop()
    print(f"row 32: soft limit 512 descriptors: {len(held)} sockets that never log in were accepted, the next "
          f"upgrade got {refused}; the server held {fds} descriptors; GET /control/health answered {status} "
          f"in {control_ms:.1f} ms")


async def trace_memory_probe():
    """15,000 pings with 65,000-byte ids under the default trace limits."""
    server = Server(BINARY)
    ws = await login(server.url, "alice", "a")
    before = server.rss_kib()
    pad = "x" * 65_000
    for index in range(15_000):
        await ws.send(json.dumps({"id": f"{index}-{pad}", "op": "ping"}))
        await ws.recv()
    grown = server.rss_kib() - before
    status, body = server.control("GET", "/control/trace?limit=1")
    server.control("POST", "/control/reset", {})
    after_reset = server.rss_kib() - before
    await ws.close()
    server.stop()
    print(f"row 33: 15,000 pings with 65,000-byte ids: RSS grew {grown / 1024:.1f} MiB (trace kept as summaries); "
          f"{after_reset / 1024:.1f} MiB above the start after POST /control/reset")


async def trace_read_probe():
    """A bystander pings every 10 ms while the whole trace is read page by page."""
    server = Server(BINARY)
    writer = await login(server.url, "bob", "b")
    for index in range(200_000 // 2):
        await writer.send(json.dumps({"id": index, "op": "ping"}))
        if index % 500 == 499:
            for _ in range(500):
                await writer.recv()
    bystander = await login(server.url, "alice", "a")
    latencies, reading = [], True

    async def pinger():
        while reading:
            started = time.perf_counter()
            await bystander.send(json.dumps({"id": 1, "op": "ping"}))
            await bystander.recv()
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.01)

    task = asyncio.create_task(pinger())
    lines, since, started = 0, 0, time.perf_counter()
    while True:
        _, body = await asyncio.to_thread(server.control, "GET", f"/control/trace?since={since}")
        page = body.splitlines()
        lines += len(page)
        if len(page) < 2_000:
            break
        since = json.loads(page[-1])["seq"]
    read_s = time.perf_counter() - started
    reading = False
    await task
    await bystander.close()
    await writer.close()
    server.stop()
    latencies.sort()
    print(f"row 34: {lines} trace lines read in {read_s:.2f} s in pages of 2,000 (the default); bystander pings during the read: "
          f"{len(latencies)}, median {latencies[len(latencies) // 2]:.2f} ms, max {latencies[-1]:.1f} ms")


async def stall_probe():
    """The loop blocks for 3 s while a client pings every 10 ms; the heartbeat is 2 s."""
    server = Server(BINARY)
    server.control("POST", "/control/fixtures", {"app": {"heartbeatTimeout": 2}})
    ws = await login(server.url, "alice", "a")
    stall = asyncio.create_task(asyncio.to_thread(server.control, "POST", "/control/debug/stall", {"ms": 3000}))
    await asyncio.sleep(0.05)
    sent = 0
    deadline = time.perf_counter() + 4
    while time.perf_counter() < deadline:
        await ws.send(json.dumps({"id": sent, "op": "ping"}))
        sent += 1
        await asyncio.sleep(0.01)
    status, _ = await stall
    answered = 0
    try:
        while answered < sent:
            await asyncio.wait_for(ws.recv(), 5)
            answered += 1
        outcome = "stayed open"
    except websockets.exceptions.ConnectionClosed as closed:
        outcome = f"was closed with {closed.rcvd.code if closed.rcvd else None}"
    await ws.close()
    server.stop()
    print(f"row 35: a 3 s stall (POST /control/debug/stall answered {status}) with a 2 s heartbeat: the client "
          f"that pinged every 10 ms sent {sent} pings, {answered} were answered, and it {outcome}")


async def main():
    for probe in (cap_probe, trace_memory_probe, trace_read_probe, stall_probe):
        await probe()


if __name__ == "__main__":
    asyncio.run(main())
