"""A `mockchat serve` process on a free port of loopback, its control API at hand, stopped
with SIGTERM: what console-browser-test.py drives and the probes measure against."""

import os
import resource
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_wire import ControlClient, ControlError, free_port  # noqa: E402


class Server:
    """`PREFIX... binary serve --port P --log-level LEVEL ARGS...`, started at once and
    ready (its listening line read) when the constructor returns. `prefix` runs it under
    another command (`taskset -c 1`, valgrind); `log_level` None leaves the server's own;
    `nofile` lowers its descriptor limit."""

    def __init__(self, binary, *args, nofile=None, prefix=(), log_level="error"):
        self.port = free_port()
        limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))) if nofile else None
        level = ["--log-level", log_level] if log_level else []
        self.process = subprocess.Popen([*prefix, binary, "serve", "--port", str(self.port), *level, *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=limit)
        if b"listening" not in self.process.stdout.readline():
            self.stop()
            raise RuntimeError(f"{binary} serve did not start")

    @property
    def pid(self):
        return self.process.pid

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
        """SIGTERM, and SIGKILL if it has not ended 30 s later."""
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.port}/v1/ws"
