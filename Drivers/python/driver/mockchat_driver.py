#!/usr/bin/env python3
"""MockChat driver protocol v1 (docs/DRIVER.md) for the Python SDK in ../mockchat_sdk.

    python3 Drivers/python/driver/mockchat_driver.py                  # stdio, spawned by --sdk
    python3 Drivers/python/driver/mockchat_driver.py --connect ws://127.0.0.1:9400/   # dials --sdk-listen

Each scenario client gets a fresh SDK instance on its own simulated Device. In virtual
mode the SDK runs on a VirtualClock that moves only on `advance`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
from typing import Any, Callable, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mockchat_sdk import PROFILES, AppSettings, ChatClient, ChatError, SystemClock, VirtualClock  # noqa: E402
from mockchat_sdk.client import Instrumentation  # noqa: E402
from mockchat_sdk.transport import Device  # noqa: E402

CALLS = ["init", "login", "logout", "connect", "disconnect", "ping", "getLoggedInUser",
         "getConnectionStatus", "backgroundTaskEnabled", "getUser", "fetchNext",
         "addUserListener", "removeUserListener", "addConnectionListener",
         "removeConnectionListener", "configureServices"]
ENVIRONMENT = ["create", "willResignActive", "didBackground", "foreground", "network", "relaunch"]

HELLO = {"type": "hello", "protocol": 1, "sdk": {"name": "mockchat-python-sdk", "version": "0.1.0"},
         "profiles": sorted(PROFILES), "virtualTime": True,
         "commands": ENVIRONMENT[:1] + CALLS + ENVIRONMENT[1:] + ["inspect"],
         "events": ["connection", "connectionListener", "presence", "socketOpening", "result"], "sockets": True}


class DriverError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class Reporter(Instrumentation):
    """Turns one client's SDK hooks into driver events."""

    def __init__(self, session: "Session", name: str):
        self.session, self.name = session, name

    def socket_opening(self) -> None:
        self.session.event(self.name, {"event": "socketOpening"})

    def connection_event(self, name, listeners, error, reason) -> None:
        body: dict = {"event": "connection", "name": name, "listeners": listeners}
        if reason is not None and name == "kicked":
            body["reason"] = reason
        if error is not None:
            body["error"] = {"code": error.code, "description": error.description}
        self.session.event(self.name, body)


class UserListener:
    """The presence listener handed to the SDK: each call it receives is one `presence` event."""

    def __init__(self, session: "Session", client: str, listener_id: str):
        self.session, self.client, self.listener_id = session, client, listener_id

    def on_user_online(self, user: dict) -> None:
        self._report("online", user)

    def on_user_offline(self, user: dict) -> None:
        self._report("offline", user)

    def _report(self, change: str, user: dict) -> None:
        self.session.event(self.client, {"event": "presence", "listener": self.listener_id, "change": change, "user": user})


def connection_listener(session: "Session", client: str, listener_id: str) -> Callable[..., None]:
    """The connection listener handed to the SDK: each call is one `connectionListener` event."""
    def called(name: str, error: Any = None, reason: Any = None) -> None:
        session.event(client, {"event": "connectionListener", "listener": listener_id, "name": name})
    return called


class Slot:
    """One scenario client: its device (kept across relaunch) and its SDK instance."""

    def __init__(self, session: "Session", name: str, profile: str):
        self.session, self.name, self.profile = session, name, PROFILES[profile]
        self.device = Device()
        self.client = self._new_client()
        self.requests: dict[str, Any] = {}

    def _new_client(self) -> ChatClient:
        return ChatClient(self.device, self.session.clock, self.session.server_url,
                          self.session.auth_key, self.profile, Reporter(self.session, self.name))

    def relaunch(self) -> None:
        self.client.shutdown()
        self.device.discard()
        self.client = self._new_client()
        self.requests.clear()


class Session:
    """One scenario: its clock, server and clients."""

    def __init__(self, write: Callable[[dict], None], start: dict):
        self.write = write
        clock = start.get("clock", {})
        self.virtual = clock.get("mode", "virtual") == "virtual"
        self.clock = VirtualClock(int(clock.get("now", 1_700_000_000_000))) if self.virtual else SystemClock()
        self.server_url = start["server"]["url"]
        self.auth_key = start.get("app", {}).get("authKey", "mockchat-dev-key")
        self.slots: dict[str, Slot] = {}

    def event(self, client: str, body: dict) -> None:
        self.write({"type": "event", "client": client, "at": self.clock.now_ms(), **body})

    async def settle(self) -> dict:
        for slot in list(self.slots.values()):
            await slot.device.settle()
        sockets = []
        for slot in self.slots.values():
            for sock in slot.device.sockets:
                if sock.port is not None:
                    sockets.append({"client": slot.name, "port": sock.port, "state": sock.state,
                                    "sent": sock.sent, "received": sock.received})
        deadline = self.clock.next_deadline() if self.virtual else None
        return {"now": self.clock.now_ms(), "nextDeadline": deadline, "sockets": sockets}

    def end(self) -> None:
        for slot in self.slots.values():
            slot.client.shutdown()
            slot.device.discard()
        self.slots.clear()


def encode_result(command: str, value: Any) -> dict:
    if command in ("login", "getUser", "getLoggedInUser"):
        return {"ok": True, "user": value} if value else {"ok": True}
    if command == "fetchNext":
        return {"ok": True, "users": value["users"], "next": value["next"]}
    if command == "getConnectionStatus":
        return {"ok": True, "status": value}
    if command == "backgroundTaskEnabled":
        return {"ok": True, "flag": value}
    return {"ok": True}


def encode_error(error: BaseException) -> dict:
    if isinstance(error, ChatError):
        return {"ok": False, "error": {"code": error.code, "description": error.description}}
    return {"ok": False, "error": {"code": "ERR_SDK", "description": repr(error)}}


def settings_from(args: dict) -> AppSettings:
    presence = args.get("presence", "all")
    if isinstance(presence, dict):
        presence = list(presence.get("roles", []))
    return AppSettings(auto_establish_socket_connection=args.get("autoEstablishSocketConnection"),
                       presence=presence, region=args.get("region", "us"),
                       reconnect_kick_enable=bool(args.get("reconnectKickEnable", False)),
                       device_id=args.get("deviceId", "default"), platform=args.get("platform", "mobile"))


def call(slot: Slot, command: str, args: dict) -> Any:
    """Performs one SDK call; returns a value or a Future."""
    client = slot.client
    if command == "init":
        return client.init(settings_from(args))
    if command == "login":
        return client.login(uid=args.get("uid"), auth_key=args.get("authKey"), token=args.get("token"))
    if command == "logout":
        outcome = client.logout()
        if outcome.done() and outcome.exception() is None:
            slot.requests.clear()      # a users request lives until logout or relaunch
        return outcome
    if command in ("connect", "disconnect", "ping"):
        return getattr(client, command)()
    if command == "getLoggedInUser":
        return client.get_logged_in_user()
    if command == "getConnectionStatus":
        return client.get_connection_status()
    if command == "backgroundTaskEnabled":
        return client.background_task_enabled()
    if command == "getUser":
        return client.get_user(args["uid"])
    if command == "fetchNext":
        name = args.get("request", "default")
        if name not in slot.requests:
            slot.requests[name] = client.users_request(args.get("limit", 30), args.get("status"))
        return slot.requests[name].fetch_next()
    if command == "addUserListener":
        return client.add_user_listener(args["listener"], UserListener(slot.session, slot.name, args["listener"]))
    if command == "removeUserListener":
        return client.remove_user_listener(args["listener"])
    if command == "addConnectionListener":
        return client.add_connection_listener(args["listener"], connection_listener(slot.session, slot.name, args["listener"]))
    if command == "removeConnectionListener":
        return client.remove_connection_listener(args["listener"])
    if command == "configureServices":
        return client.configure_services(args.get("state", "didBackground"))
    raise DriverError("unknown-command", f"no command {command!r}")


def environment(session: Session, slot: Optional[Slot], name: str, command: str, args: dict) -> None:
    if command == "create":
        profile = args.get("profile", "cometchat-ios")
        if profile not in PROFILES:
            raise DriverError("unsupported", f"no profile {profile!r}")
        session.slots[name] = Slot(session, name, profile)
        return
    if slot is None:
        raise DriverError("unknown-client", f"no client {name!r}")
    if command == "willResignActive":
        slot.client.will_resign_active()
    elif command == "didBackground":
        slot.client.did_background()
    elif command == "foreground":
        slot.client.foreground()
    elif command == "network":
        condition = args.get("condition")
        if condition not in ("up", "down", "weak"):
            raise DriverError("bad-arguments", f"network condition {condition!r}")
        slot.client.network_changed(condition)
        slot.device.set_network(condition)
    elif command == "relaunch":
        slot.relaunch()


class Driver:
    """Reads harness messages and answers them in order."""

    def __init__(self, write: Callable[[dict], None]):
        self.write = write
        self.session: Optional[Session] = None

    async def handle(self, message: dict) -> None:
        kind, request_id = message.get("type"), message.get("id")
        try:
            reply = await self._answer(kind, message)
        except DriverError as error:
            reply = {"ok": False, "error": {"code": error.code, "message": error.message}}
        except Exception as error:                # the SDK threw: report, keep serving
            reply = {"ok": False, "error": {"code": "failed", "message": repr(error)}}
        self.write({"type": "reply", "id": request_id, **reply})

    async def _answer(self, kind: str, message: dict) -> dict:
        if kind == "start":
            if self.session is not None:
                self.session.end()
            self.session = Session(self.write, message)
            return {"ok": True}
        session = self.session
        if session is None:
            raise DriverError("failed", f"{kind!r} before start")
        if kind == "end":
            session.end()
            await asyncio.sleep(0)
            self.session = None
            return {"ok": True}
        if kind == "settle":
            return {"ok": True, "state": await session.settle()}
        if kind == "advance":
            if not session.virtual:
                raise DriverError("unsupported", "advance in wall-clock mode")
            to = int(message["to"])
            fire = message.get("fire", True)
            session.clock.advance_to(to, fire=fire)
            return {"ok": True, "state": await session.settle()}
        if kind == "command":
            return await self._command(session, message)
        raise DriverError("unknown-command", f"no message type {kind!r}")

    async def _command(self, session: Session, message: dict) -> dict:
        name, command, args = message.get("client"), message.get("command"), message.get("args") or {}
        slot = session.slots.get(name)
        if command not in ENVIRONMENT and command not in CALLS and command != "inspect":
            raise DriverError("unknown-command", f"no command {command!r}")
        if command in ENVIRONMENT:
            environment(session, slot, name, command, args)
            await session.settle()
            return {"ok": True}
        if slot is None:
            raise DriverError("unknown-client", f"no client {name!r}")
        if command == "inspect":
            user = slot.client.get_logged_in_user()
            return {"ok": True, "state": {"status": slot.client.get_connection_status(),
                                          "backgroundTaskEnabled": slot.client.background_task_enabled(),
                                          "loggedInUser": user.get("uid") if user else None}}
        if command not in CALLS:
            raise DriverError("unknown-command", f"no command {command!r}")
        try:
            outcome = call(slot, command, args)
        except KeyError as missing:
            raise DriverError("bad-arguments", f"{command} needs {missing}") from None
        if not isinstance(outcome, asyncio.Future):
            return {"ok": True, "result": encode_result(command, outcome)}
        await session.settle()
        if outcome.done():
            return {"ok": True, "result": self._outcome(command, outcome)}
        request_id = message.get("id")

        def later(done: asyncio.Future) -> None:
            if self.session is session:
                session.event(name, {"event": "result", "command": request_id, "result": self._outcome(command, done)})
        outcome.add_done_callback(later)
        return {"ok": True, "pending": True}

    @staticmethod
    def _outcome(command: str, future: asyncio.Future) -> dict:
        error = future.exception()
        return encode_error(error) if error is not None else encode_result(command, future.result())


async def serve_stdio() -> None:
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue = asyncio.Queue()

    def read_stdin() -> None:      # a thread: stdin may be a pipe, a file or a terminal
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, "")
    threading.Thread(target=read_stdin, daemon=True).start()

    def write(obj: dict) -> None:
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    driver = Driver(write)
    write(HELLO)
    while True:
        line = await lines.get()
        if not line:
            break
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError as error:
            write({"type": "error", "message": f"not a JSON message: {error}"})
            continue
        await driver.handle(message)
    if driver.session is not None:
        driver.session.end()


async def serve_websocket(url: str) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed
    try:
        await serve_connection(connect, url)
    except ConnectionClosed:
        pass                                   # the harness is done with us


async def serve_connection(connect, url: str) -> None:
    async with connect(url, ping_interval=None, max_size=None, proxy=None) as ws:
        pending: list[str] = []

        def write(obj: dict) -> None:
            pending.append(json.dumps(obj, separators=(",", ":")))

        async def flush() -> None:
            while pending:
                await ws.send(pending.pop(0))

        driver = Driver(write)
        write(HELLO)
        await flush()
        async for text in ws:
            try:
                message = json.loads(text)
                if not isinstance(message, dict):
                    raise ValueError("not an object")
            except ValueError as error:
                write({"type": "error", "message": f"not a JSON message: {error}"})
                await flush()
                continue
            await driver.handle(message)
            await flush()
        if driver.session is not None:
            driver.session.end()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connect", metavar="URL", help="dial a harness started with --sdk-listen")
    options = parser.parse_args()
    try:
        asyncio.run(serve_websocket(options.connect) if options.connect else serve_stdio())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
