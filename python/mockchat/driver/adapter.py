"""What an SDK's driver supplies to the kit: an `Adapter`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol


class DriverError(Exception):
    """A protocol error (docs/DRIVER.md, "Protocol errors"): `code` is one of
    unknown-command, unsupported, bad-arguments, unknown-client, failed."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class Clock(Protocol):
    """The clock the adapter injects into its SDK, in integer Unix milliseconds."""

    def now_ms(self) -> int: ...

    def advance_to(self, to: int, fire: bool = True) -> None: ...

    def next_deadline(self) -> Optional[int]: ...


@dataclass
class Scenario:
    """What `start` says about one scenario; `emit` reports an event for a client."""

    id: str
    seed: int
    server_url: str
    app: dict
    virtual: bool
    start_ms: int
    emit: Callable[[str, dict], None]

    @property
    def auth_key(self) -> str:
        return self.app.get("authKey", "mockchat-dev-key")


class Adapter:
    """One SDK behind the driver protocol. Subclasses set the handshake's fields and
    implement `start`, `perform`, `settle` and `end`; the kit does the rest.

    `perform(client, command, args)` does one command (docs/DRIVER.md, "The commands"):
    - an SDK call returns its value (a user dict or None, `{"users","next"}` for
      fetchNext, a status string, a flag) or an awaitable of it, or raises; an SDK error
      that `sdk_error` recognises becomes `{"ok":false,"error":...}` in the result;
    - an environment command (create, lifecycle, network, relaunch) returns None;
    - `inspect` returns the state dict.
    A missing argument (KeyError) is `bad-arguments`; raise `DriverError` for the others."""

    sdk_name = "unnamed-sdk"
    sdk_version = "0.0.0"
    profiles: list[str] = []
    commands: list[str] = []
    events: list[str] = ["connection", "presence", "socketOpening", "result"]
    virtual_time = True
    sockets = False
    #: The SDK's manifest (docs/SPECIFICATION.md), sent in the hello when set.
    manifest: Optional[dict] = None

    def hello(self) -> dict:
        hello = {"type": "hello", "protocol": 1, "sdk": {"name": self.sdk_name, "version": self.sdk_version},
                 "profiles": sorted(self.profiles), "virtualTime": self.virtual_time,
                 "commands": list(self.commands), "events": list(self.events), "sockets": self.sockets}
        if self.manifest is not None:
            hello["manifest"] = self.manifest
        return hello

    def start(self, scenario: Scenario) -> Clock:
        """A new scenario: make its clock (at `scenario.start_ms` in virtual mode) and return it."""
        raise NotImplementedError

    def perform(self, client: str, command: str, args: dict) -> Any:
        raise NotImplementedError

    async def settle(self) -> list[dict]:
        """Wait until the SDK has nothing runnable; return its open sockets (`sockets: true`)."""
        return []

    def end(self) -> None:
        """Discard every client: nothing may be reported after this returns."""

    def sdk_error(self, error: BaseException) -> Optional[tuple[str, str]]:
        """The SDK's error code and description, when `error` is one the SDK reports."""
        return None
