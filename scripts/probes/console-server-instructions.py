#!/usr/bin/env python3
"""The server's instructions per trace entry with and without a console viewer, counted
by callgrind: a measure of the server's own cost of the console stream that the machine's
load does not move (docs/BENCHMARKS.md, "The web console").

Runs `mockchat serve` under `valgrind --tool=callgrind` with instrumentation off, opens the
setup's viewer (none; `reader`, reading the stream as fast as it comes; `stalled`, never
reading, scripts/probes/bench-console.py), turns it on for one `mockchat bench
ping` run and off after it, and divides the instructions counted by the trace entries
the server kept meanwhile (two a ping). Prints one JSON line per run and the medians.

Usage: console-server-instructions.py MOCKCHAT OUT_DIR [--repeats 2] [--rate 400]
       [--connections 100] [--duration 8]
"""
import argparse
import glob
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from console_timing import settled_trace_seq  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_console", os.path.join(HERE, "bench-console.py"))
bench_console = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_console)


def callgrind(pid, *switches):
    subprocess.run(["callgrind_control", *switches, str(pid)], check=True, stdout=subprocess.DEVNULL)


def instructions(out_prefix):
    """The instructions (Ir) of every dump callgrind wrote for the server."""
    total = 0
    for path in glob.glob(out_prefix + "*"):
        with open(path) as f:
            for line in f:
                if line.startswith("totals:"):  # (its `summary:` line is 0 when instrumentation was toggled)
                    total += int(line.split()[1])
                    break
    return total


def run(mockchat, setup, args, index):
    out_prefix = os.path.join(args.out, f"callgrind.{setup}-{index}")
    for path in glob.glob(out_prefix + "*"):
        os.remove(path)
    server = bench_console.Server(mockchat, log_level=None, prefix=[
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out_prefix}"])
    port = server.port
    viewer = None
    try:
        if setup == "stalled":
            viewer = bench_console.stalled_viewer(port)
        elif setup == "reader":
            viewer, _ = bench_console.reading_viewer(port)
        first = settled_trace_seq(port)
        callgrind(server.pid, "-i", "on")
        subprocess.run([mockchat, "bench", "ping", "--server", f"127.0.0.1:{port}", "--connections", str(args.connections),
                        "--rate", str(args.rate), "--duration", str(args.duration), "--warmup", "1", "--no-progress"],
                       check=True, stdout=subprocess.DEVNULL)
        last = settled_trace_seq(port)
        callgrind(server.pid, "-i", "off")
    finally:
        if viewer:
            viewer.close()
        server.stop()
    deadline = time.monotonic() + 30
    while not instructions(out_prefix) and time.monotonic() < deadline:
        time.sleep(0.2)
    counted_instructions = instructions(out_prefix)
    return {"setup": setup, "entries": last - first, "instructions": counted_instructions,
            "perEntry": round(counted_instructions / max(1, last - first))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mockchat")
    parser.add_argument("out")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--rate", type=int, default=400)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--duration", type=float, default=8)
    parser.add_argument("--setups", default="none,reader,stalled")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = {setup: [] for setup in args.setups.split(",")}
    for index in range(args.repeats):
        for setup in rows:
            row = run(args.mockchat, setup, args, index)
            rows[setup].append(row)
            print(json.dumps(row), flush=True)
    base = statistics.median(r["perEntry"] for r in rows[next(iter(rows))])
    for setup, runs in rows.items():
        median = statistics.median(r["perEntry"] for r in runs)
        print(f"{setup}: {median:,.0f} instructions per trace entry, {median / base:.3f} of the base")


if __name__ == "__main__":
    main()
