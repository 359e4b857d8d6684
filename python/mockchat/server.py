"""Starts `mockchat serve` as a child process on a free port and stops it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from typing import Optional, Sequence

from .control import ControlClient
from .errors import ServerStartError, Unreachable

BANNER = re.compile(r"MockChat listening on ws://(?P<host>[^/\s]+):(?P<port>\d+)/v1/ws")


def find_binary(explicit: Optional[str] = None) -> str:
    """The `mockchat` binary: `explicit`, else $MOCKCHAT, else the one on PATH."""
    candidate = explicit or os.environ.get("MOCKCHAT") or shutil.which("mockchat")
    if not candidate:
        raise ServerStartError("no mockchat binary: install MockChat, put it on PATH, or set MOCKCHAT=/path/to/mockchat")
    if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise ServerStartError(f"MOCKCHAT={candidate!r} is not an executable file")
    return candidate


class MockChatServer:
    """One `mockchat serve` process on 127.0.0.1 and a free port.

        with MockChatServer(clock="virtual") as server:
            server.control.advance(seconds=30)

    `clock` is "virtual" (time moves only on `control.advance`) or "system"; `fixtures`
    a folder with users.json and app.json; `app` app settings laid over them through
    `POST /control/fixtures` (and laid again by `reset()`); `control_token` guards the
    control API (given to the server as $MOCKCHAT_CONTROL_TOKEN, default: that variable's
    value here); `extra_args` more `serve` options. The server's stdout and stderr go to `log_path` when given."""

    def __init__(self, binary: Optional[str] = None, clock: str = "virtual", fixtures: Optional[str] = None,
                 app: Optional[dict] = None, users: Optional[list] = None, extra_args: Sequence[str] = (),
                 control_token: Optional[str] = None, start_timeout: float = 20.0, log_path: Optional[str] = None):
        if clock not in ("virtual", "system"):
            raise ValueError(f"clock must be 'virtual' or 'system', not {clock!r}")
        self.binary = find_binary(binary)
        self.clock, self.fixtures, self.app, self.users = clock, fixtures, app, users
        self.extra_args, self.start_timeout, self.log_path = list(extra_args), start_timeout, log_path
        self.control_token = control_token or os.environ.get("MOCKCHAT_CONTROL_TOKEN") or None
        self.process: Optional[subprocess.Popen] = None
        self.port: Optional[int] = None
        self._control: Optional[ControlClient] = None
        self._output: list[str] = []

    @property
    def control(self) -> ControlClient:
        if self._control is None:
            raise ServerStartError("the server is not running: call start() first")
        return self._control

    @property
    def ws_url(self) -> str:
        return self.control.ws_url

    @property
    def output(self) -> str:
        """What the server printed so far (stdout and stderr)."""
        return "".join(self._output)

    def start(self) -> "MockChatServer":
        command = [self.binary, "serve", "--host", "127.0.0.1", "--port", "0", "--clock", self.clock, *self.extra_args]
        if self.fixtures:
            command += ["--fixtures", self.fixtures]
        environment = dict(os.environ)
        if self.control_token:
            environment["MOCKCHAT_CONTROL_TOKEN"] = self.control_token
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=environment)
        found = threading.Event()
        threading.Thread(target=self._read_output, args=(found,), daemon=True).start()
        if not found.wait(self.start_timeout) or self.port is None:
            self.stop()
            raise ServerStartError(f"`{' '.join(command)}` did not start within {self.start_timeout} s:\n{self.output}")
        self._control = ControlClient.for_port(self.port, token=self.control_token)
        self._wait_healthy()
        self._apply_fixtures()
        return self

    def _read_output(self, found: threading.Event) -> None:
        assert self.process is not None and self.process.stdout is not None
        log = open(self.log_path, "a") if self.log_path else None
        for line in self.process.stdout:
            self._output.append(line)
            if log:
                log.write(line)
                log.flush()
            match = BANNER.search(line)
            if match and self.port is None:
                self.port = int(match.group("port"))
                found.set()
        found.set()                            # the process ended: start() reports it
        if log:
            log.close()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                self.control.health()
                return
            except Unreachable:
                if time.monotonic() > deadline or (self.process and self.process.poll() is not None):
                    self.stop()
                    raise ServerStartError(f"the server on port {self.port} never answered /control/health:\n{self.output}")
                time.sleep(0.02)

    def _apply_fixtures(self) -> None:
        if self.users is not None or self.app is not None:
            self.control.load_fixtures(users=self.users, app=self.app)

    def reset(self) -> None:
        """`POST /control/reset`, then this server's `users` and `app` again."""
        self.control.reset()
        self._apply_fixtures()

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """SIGTERM (every session gets its 1001 close), then SIGKILL after `timeout`."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self) -> "MockChatServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
