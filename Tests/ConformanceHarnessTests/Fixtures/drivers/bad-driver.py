#!/usr/bin/env python3
"""A driver for the harness's own tests: it answers every request plainly, and on a
client's `init` it misbehaves as argv[1] says: crash (an exception, exit status 1),
hang (never answers), junk (writes a line that is not JSON) or none. With
`unsupported` it refuses init as unsupported; with `pending`
it behaves: it answers init as pending and writes the result event in the same write,
so that both reach the harness at once.

Modes that test how the harness ends drivers (each writes the pids it leaves behind,
one a line, to the file named by MOCKCHAT_TEST_PIDS): `child-holds-stdout` starts a
child that keeps the driver's stdout open for 300 s and otherwise behaves;
`ignores-term` ignores SIGTERM and keeps running for 300 s after its stdin ends;
`long-line` answers init with a line of 50 MB that is not JSON."""
import json
import os
import signal
import subprocess
import sys
import time

mode = sys.argv[1] if len(sys.argv) > 1 else "none"


def leave(pid):
    with open(os.environ["MOCKCHAT_TEST_PIDS"], "a") as pids:
        pids.write("%d\n" % pid)


if mode == "child-holds-stdout":
    leave(subprocess.Popen(["sleep", "300"]).pid)
if mode == "ignores-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    leave(os.getpid())


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


send({"type": "hello", "protocol": 1, "sdk": {"name": "bad-driver", "version": "0"},
      "profiles": ["cometchat-ios"], "virtualTime": True, "commands": ["create", "init", "inspect"],
      "events": ["connection"], "sockets": True})
now = 0
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "command" and message["command"] == "init":
        print("bad-driver: init received, mode " + mode, file=sys.stderr, flush=True)
        if mode == "crash":
            raise RuntimeError("boom: the SDK crashed in init")
        if mode == "hang":
            time.sleep(3600)
        if mode == "long-line":
            sys.stdout.write("x" * 50_000_000 + "\n")
            sys.stdout.flush()
            continue
        if mode == "junk":
            sys.stdout.write("this is not JSON\n")
            sys.stdout.flush()
            continue
        if mode == "unsupported":
            send({"type": "reply", "id": message["id"], "ok": False,
                  "error": {"code": "unsupported", "message": "this SDK has no manual mode"}})
            continue
        if mode == "pending":
            reply = {"type": "reply", "id": message["id"], "ok": True, "pending": True}
            event = {"type": "event", "client": message["client"], "at": now, "event": "result",
                     "command": message["id"], "result": {"ok": True}}
            sys.stdout.write(json.dumps(reply) + "\n" + json.dumps(event) + "\n")
            sys.stdout.flush()
            continue
    reply = {"type": "reply", "id": message["id"], "ok": True}
    if kind == "start":
        now = message["clock"]["now"]
    if kind in ("settle", "advance"):
        now = message.get("to", now)
        reply["state"] = {"now": now, "nextDeadline": None, "sockets": []}
    if kind == "command" and message["command"] == "init":
        reply["result"] = {"ok": True}
    send(reply)
if mode == "ignores-term":
    time.sleep(300)
