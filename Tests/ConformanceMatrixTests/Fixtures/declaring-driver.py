#!/usr/bin/env python3
"""Runs the driver given after the manifest (normally `mockchat driver`) and relays the
protocol both ways, with the manifest (a JSON object, the first argument) added to its
hello: an SDK that declares its own choices, for the matrix's tests."""
import json
import subprocess
import sys
import threading

manifest = json.loads(sys.argv[1])
inner = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def from_harness():
    for line in sys.stdin.buffer:
        inner.stdin.write(line)
        inner.stdin.flush()
    inner.stdin.close()


threading.Thread(target=from_harness, daemon=True).start()
for number, line in enumerate(inner.stdout):
    if number == 0:
        hello = json.loads(line)
        hello["manifest"] = manifest
        line = (json.dumps(hello) + "\n").encode()
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(inner.wait())
