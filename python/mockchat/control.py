"""A client of MockChat's control API (docs/PROTOCOL.md, section 12): clock, fixtures,
faults, pushes, trace paging, settle and reset, over plain HTTP from the standard library."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Iterator, Optional

from .errors import Unreachable, control_error


class ControlClient:
    """Talks to one server's `/control/` routes. Every method returns the decoded JSON
    reply, or raises a `ControlError` subclass naming the route and the server's text."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.token, self.timeout = token, timeout

    @classmethod
    def for_port(cls, port: int, host: str = "127.0.0.1", **options: Any) -> "ControlClient":
        return cls(f"http://{host}:{port}", **options)

    @property
    def ws_url(self) -> str:
        """The chat endpoint on the same port."""
        return "ws" + self.base_url[len("http"):] + "/v1/ws"

    # -- the routes ---------------------------------------------------------------

    def health(self) -> dict:
        return self.request("GET", "/control/health")

    def reset(self) -> dict:
        """Closes every WebSocket with 4009 and restores the startup fixtures; clears faults."""
        return self.request("POST", "/control/reset")

    def load_fixtures(self, users: Optional[list] = None, app: Optional[dict] = None) -> dict:
        body: dict = {}
        if users is not None:
            body["users"] = users
        if app is not None:
            body["app"] = app
        return self.request("POST", "/control/fixtures", body)

    def clock(self) -> dict:
        return self.request("GET", "/control/clock")

    def advance(self, seconds: Optional[float] = None, ms: Optional[int] = None) -> dict:
        """Moves the virtual clock (give `seconds` or `ms`) and fires the timers that come due."""
        if (seconds is None) == (ms is None):
            raise ValueError("advance: give exactly one of seconds= and ms=")
        return self.request("POST", "/control/clock/advance", {"seconds": seconds} if ms is None else {"ms": ms})

    def connections(self) -> list:
        return self.request("GET", "/control/connections")["connections"]

    def presence(self) -> list:
        return self.request("GET", "/control/presence")["online"]

    def faults(self) -> dict:
        return self.request("GET", "/control/faults")

    def fault(self, name: str, **fields: Any) -> dict:
        """Sets (or with `enabled=False` clears) one fault: `fault("blackhole", uid="bob")`,
        `fault("link", uid="alice", direction="out", delayMs=200)`."""
        return self.request("POST", "/control/faults", {"fault": name, **fields})

    def clear_faults(self) -> dict:
        return self.request("DELETE", "/control/faults")

    def push(self, **fields: Any) -> dict:
        """Sends an `event`, `frame`, raw `bytes` or a `close` to chosen connections now."""
        return self.request("POST", "/control/push", fields)

    def settle(self) -> dict:
        return self.request("POST", "/control/settle")

    def trace(self, since: int = 0, limit: Optional[int] = None) -> list[dict]:
        """One page of trace entries after sequence number `since`."""
        query = f"?since={since}" + (f"&limit={limit}" if limit is not None else "")
        text = self.request("GET", "/control/trace" + query, raw=True)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def trace_entries(self, since: int = 0, page: int = 2000) -> Iterator[dict]:
        """Every trace entry after `since`, fetched page by page."""
        while True:
            entries = self.trace(since=since, limit=page)
            yield from entries
            if len(entries) < page:
                return
            since = entries[-1]["seq"]

    # -- the transport ------------------------------------------------------------

    def request(self, method: str, path: str, body: Optional[dict] = None, raw: bool = False) -> Any:
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                text = reply.read().decode()
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                message = json.loads(text).get("error", text)
            except ValueError:
                message = text
            raise control_error(method, path, error.code, message) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise Unreachable(f"{method} {self.base_url}{path}: {getattr(error, 'reason', error)}") from None
        return text if raw else json.loads(text)
