"""The `mockchat serve` process the probes measure against: one on a free port of
loopback, its control API at hand, stopped with SIGTERM (robustness-probe.py,
reproductions.py and the fault table's fault_peer.py)."""

import os
import resource
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from chat_wire import ControlClient, ControlError, free_port  # noqa: E402


class Server:
    """`binary serve --port P --log-level error ARGS...`, started at once and ready (its
    listening line read) when the constructor returns; `nofile` lowers its descriptor
    limit."""

    def __init__(self, binary, *args, nofile=None):
        self.port = free_port()
        limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))) if nofile else None
        self.process = subprocess.Popen([binary, "serve", "--port", str(self.port), "--log-level", "error", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=limit)
        self.process.stdout.readline()  # the listening line

    def control(self, method, path, body=None):
        """The status and body text of a control API request (an error status too)."""
        try:
            return 200, ControlClient.for_port(self.port).request(method, path, body, raw=True)
        except ControlError as error:
            return error.status, error.message

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.port}/v1/ws"
