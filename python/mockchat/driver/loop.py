"""The protocol loop: one harness message in, one reply out (docs/DRIVER.md)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Optional

from .adapter import Adapter, Clock, DriverError, Scenario
from .device import DEVICE

ENVIRONMENT = ["create", "willResignActive", "didBackground", "foreground", "network", "relaunch"]
CALLS = ["init", "login", "logout", "connect", "disconnect", "ping", "getLoggedInUser", "getConnectionStatus",
         "backgroundTaskEnabled", "getUser", "fetchNext", "addUserListener", "removeUserListener",
         "addConnectionListener", "removeConnectionListener", "configureServices"]
QUERIES = ["inspect"]


def encode_value(command: str, value: Any) -> dict:
    """A call's value as a result (docs/DRIVER.md, "Result shapes")."""
    if command in ("login", "getUser", "getLoggedInUser"):
        return {"ok": True, "user": value} if value else {"ok": True}
    if command == "fetchNext":
        return {"ok": True, "users": value["users"], "next": value["next"]}
    if command == "getConnectionStatus":
        return {"ok": True, "status": value}
    if command == "backgroundTaskEnabled":
        return {"ok": True, "flag": value}
    return {"ok": True}


class Driver:
    """Answers harness messages in order for one adapter; `write` sends a message."""

    def __init__(self, adapter: Adapter, write: Callable[[dict], None]):
        self.adapter, self.write = adapter, write
        self.scenario: Optional[Scenario] = None
        self.clock: Optional[Clock] = None

    async def handle(self, message: dict) -> None:
        try:
            reply = await self._answer(message.get("type"), message)
        except DriverError as error:
            reply = {"ok": False, "error": {"code": error.code, "message": error.message}}
        except Exception as error:                     # the SDK threw: report, keep serving
            reply = {"ok": False, "error": {"code": "failed", "message": repr(error)}}
        self.write({"type": "reply", "id": message.get("id"), **reply})

    def finish(self) -> None:
        """The transport closed: end the scenario still running."""
        if self.scenario is not None:
            self.adapter.end()
            self.scenario = None

    def emit(self, scenario: Scenario, client: str, body: dict) -> None:
        if self.scenario is scenario and self.clock is not None:
            self.write({"type": "event", "client": client, "at": self.clock.now_ms(), **body})

    async def _answer(self, kind: Any, message: dict) -> dict:
        if kind == "start":
            self.finish()
            self._start(message)
            return {"ok": True}
        if self.scenario is None:
            raise DriverError("failed", f"{kind!r} before start")
        if kind == "end":
            self.finish()
            await asyncio.sleep(0)
            return {"ok": True}
        if kind == "settle":
            return {"ok": True, "state": await self._state()}
        if kind == "advance":
            if not self.scenario.virtual:
                raise DriverError("unsupported", "advance in wall-clock mode")
            self.clock.advance_to(int(message["to"]), fire=message.get("fire", True))
            return {"ok": True, "state": await self._state()}
        if kind == "command":
            return await self._command(message)
        raise DriverError("unknown-command", f"no message type {kind!r}")

    def _start(self, message: dict) -> None:
        clock = message.get("clock", {})
        scenario = Scenario(id=message.get("scenario", ""), seed=int(message.get("seed", 0)),
                            server_url=message["server"]["url"], app=message.get("app", {}),
                            virtual=clock.get("mode", "virtual") == "virtual",
                            start_ms=int(clock.get("now", 1_700_000_000_000)),
                            emit=lambda client, body: self.emit(scenario, client, body))
        self.scenario = scenario
        self.clock = self.adapter.start(scenario)

    async def _state(self) -> dict:
        sockets = await self.adapter.settle()
        deadline = self.clock.next_deadline() if self.scenario.virtual else None
        return {"now": self.clock.now_ms(), "nextDeadline": deadline, "sockets": sockets}

    async def _command(self, message: dict) -> dict:
        client, command, args = message.get("client"), message.get("command"), message.get("args") or {}
        if command not in self.adapter.commands:
            raise DriverError("unknown-command", f"no command {command!r}")
        try:
            outcome = self.adapter.perform(client, command, args)
        except KeyError as missing:
            raise DriverError("bad-arguments", f"{command} needs {missing}") from None
        except Exception as error:
            if command not in CALLS or self.adapter.sdk_error(error) is None:
                raise
            return {"ok": True, "result": self._failure(error)}
        if command in QUERIES:
            return {"ok": True, "state": outcome}
        if command in ENVIRONMENT or command in DEVICE:
            await self.adapter.settle()
            return {"ok": True}
        if not inspect.isawaitable(outcome):
            return {"ok": True, "result": self._encode(command, outcome)}
        future = asyncio.ensure_future(outcome)
        await self.adapter.settle()
        if future.done():
            return {"ok": True, "result": self._outcome(command, future)}
        scenario = self.scenario
        future.add_done_callback(lambda done: self.emit(
            scenario, client, {"event": "result", "command": message.get("id"), "result": self._outcome(command, done)}))
        return {"ok": True, "pending": True}

    def _encode(self, command: str, value: Any) -> dict:
        return value.result if isinstance(value, Result) else encode_value(command, value)

    def _outcome(self, command: str, future: asyncio.Future) -> dict:
        if future.cancelled():
            return {"ok": False, "error": {"code": "ERR_SDK", "description": "the call was cancelled"}}
        error = future.exception()
        return self._encode(command, future.result()) if error is None else self._failure(error)

    def _failure(self, error: BaseException) -> dict:
        known = self.adapter.sdk_error(error)
        code, description = known if known else ("ERR_SDK", repr(error))
        return {"ok": False, "error": {"code": code, "description": description}}


class Result:
    """A result an adapter encodes itself, for a command the kit does not know the shape of."""

    def __init__(self, **fields: Any):
        self.result = {"ok": True, **fields}
