#!/usr/bin/env python3
"""A driver that misbehaves on purpose, for the SDK fuzzer's tests.

It runs the driver given after the mode (normally `mockchat driver`) and relays the
protocol both ways, except:

  drop-attempt:N     the Nth socketOpening event is not reported (a difference)
  crash-on:COMMAND   exits with status 3 when asked to perform COMMAND
  hang-on:COMMAND    stops answering when asked to perform COMMAND
  junk-on:COMMAND    writes a line that is not JSON when asked to perform COMMAND
  unsupported-on:COMMAND  refuses COMMAND with the protocol error `unsupported`
"""
import json
import subprocess
import sys
import threading
import time

mode, _, argument = sys.argv[1].partition(":")
inner = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lock = threading.Lock()


def emit(line):
    with lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def from_harness():
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("type") == "command" and message.get("command") == argument:
            if mode == "crash-on":
                sys.stderr.write("faulty driver: crashing on %s\n" % argument)
                sys.stderr.flush()
                inner.kill()
                sys.stdout.flush()
                import os
                os._exit(3)
            if mode == "hang-on":
                while True:
                    time.sleep(3600)
            if mode == "junk-on":
                emit(b"Traceback (most recent call last): not a protocol line\n")
                continue
            if mode == "unsupported-on":
                reply = {"type": "reply", "id": message["id"], "ok": False,
                         "error": {"code": "unsupported", "message": "this SDK has no %s" % argument}}
                emit((json.dumps(reply) + "\n").encode())
                continue
        inner.stdin.write(line)
        inner.stdin.flush()
    inner.stdin.close()


threading.Thread(target=from_harness, daemon=True).start()
attempts = 0
for line in inner.stdout:
    message = json.loads(line)
    if mode == "drop-attempt" and message.get("type") == "event" and message.get("event") == "socketOpening":
        attempts += 1
        if attempts == int(argument):
            continue
    emit(line)
inner.wait()
