#!/usr/bin/env python3
"""MockChat driver for the Python SDK in ../mockchat_sdk: its adapter to the driver kit
(the `mockchat` package's `mockchat.driver`, which speaks driver protocol v1, docs/DRIVER.md).

    python3 Drivers/python/driver/mockchat_driver.py                  # stdio, spawned by --sdk
    python3 Drivers/python/driver/mockchat_driver.py --connect ws://127.0.0.1:9400/   # dials --sdk-listen

Each scenario client gets a fresh SDK instance on its own simulated Device. In virtual
mode the SDK runs on a VirtualClock that moves only on `advance`."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))                       # mockchat_sdk
sys.path.append(os.path.join(HERE, "..", "..", "..", "python"))    # mockchat, when not installed

from mockchat.driver import CALLS, DEVICE, ENVIRONMENT, QUERIES, Adapter, DriverError, Scenario, run  # noqa: E402
from mockchat.driver.device import read as read_device_event  # noqa: E402
from mockchat_sdk import PROFILES, AppSettings, ChatClient, ChatError, SystemClock, VirtualClock  # noqa: E402
from mockchat_sdk.client import Instrumentation  # noqa: E402
from mockchat_sdk.device_clock import DeviceClock  # noqa: E402
from mockchat_sdk.manifest import MANIFEST  # noqa: E402
from mockchat_sdk.transport import Device  # noqa: E402


class Reporter(Instrumentation):
    """Turns one client's SDK hooks into driver events."""

    def __init__(self, scenario: Scenario, name: str):
        self.emit = lambda body: scenario.emit(name, body)

    def socket_opening(self) -> None:
        self.emit({"event": "socketOpening"})

    def connection_event(self, name, listeners, error, reason) -> None:
        body: dict = {"event": "connection", "name": name, "listeners": listeners}
        if reason is not None and name == "kicked":
            body["reason"] = reason
        if error is not None:
            body["error"] = {"code": error.code, "description": error.description}
        self.emit(body)


class UserListener:
    """The presence listener handed to the SDK: each call it receives is one `presence` event."""

    def __init__(self, scenario: Scenario, client: str, listener_id: str):
        self.scenario, self.client, self.listener_id = scenario, client, listener_id

    def on_user_online(self, user: dict) -> None:
        self._report("online", user)

    def on_user_offline(self, user: dict) -> None:
        self._report("offline", user)

    def _report(self, change: str, user: dict) -> None:
        self.scenario.emit(self.client, {"event": "presence", "listener": self.listener_id, "change": change, "user": user})


def connection_listener(scenario: Scenario, client: str, listener_id: str) -> Callable[..., None]:
    """The connection listener handed to the SDK: each call is one `connectionListener` event."""
    def called(name: str, error: Any = None, reason: Any = None) -> None:
        scenario.emit(client, {"event": "connectionListener", "listener": listener_id, "name": name})
    return called


class Slot:
    """One scenario client: its device (kept across relaunch) and its SDK instance."""

    def __init__(self, adapter: "PythonSDKAdapter", name: str, profile: str):
        self.adapter, self.name, self.profile = adapter, name, PROFILES[profile]
        self.device = Device()
        self.clock = DeviceClock(adapter.clock)     # the device's timers: sleep and throttling
        self.client = self._new_client()
        self.requests: dict[str, Any] = {}

    def _new_client(self) -> ChatClient:
        scenario = self.adapter.scenario
        return ChatClient(self.device, self.clock, scenario.server_url, scenario.auth_key, self.profile,
                          Reporter(scenario, self.name))

    def relaunch(self) -> None:
        self.client.shutdown()
        self.device.discard()
        self.client = self._new_client()
        self.requests.clear()


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
        return client.add_user_listener(args["listener"], UserListener(slot.adapter.scenario, slot.name, args["listener"]))
    if command == "removeUserListener":
        return client.remove_user_listener(args["listener"])
    if command == "addConnectionListener":
        return client.add_connection_listener(args["listener"],
                                              connection_listener(slot.adapter.scenario, slot.name, args["listener"]))
    if command == "removeConnectionListener":
        return client.remove_connection_listener(args["listener"])
    if command == "configureServices":
        return client.configure_services(args.get("state", "didBackground"))
    raise DriverError("unknown-command", f"no command {command!r}")


def environment(slot: Slot, command: str, args: dict) -> None:
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


def device_event(slot: Slot, command: str, args: dict) -> None:
    """docs/DRIVER.md, "Device events": the device's resolver and clock, and the OS's notice."""
    value = read_device_event(command, args)
    if command == "dns":
        slot.device.set_dns_failures(value.attempts, value.error)
    elif command == "sleep":
        slot.clock.sleep(value)
    elif command == "throttle":
        slot.clock.set_throttle(value)
    else:
        slot.client.network_path_changed()


class PythonSDKAdapter(Adapter):
    """The Python SDK behind the driver kit: one Slot per scenario client."""

    sdk_name, sdk_version = MANIFEST["sdk"]["name"], MANIFEST["sdk"]["version"]
    manifest = MANIFEST
    profiles = sorted(PROFILES)
    commands = ENVIRONMENT[:1] + CALLS + ENVIRONMENT[1:] + DEVICE + QUERIES
    events = ["connection", "connectionListener", "presence", "socketOpening", "result"]
    sockets = True

    def start(self, scenario: Scenario):
        self.scenario, self.slots = scenario, {}
        self.clock = VirtualClock(scenario.start_ms) if scenario.virtual else SystemClock()
        return self.clock

    def perform(self, client: str, command: str, args: dict) -> Any:
        if command == "create":
            profile = args.get("profile", "cometchat-ios")
            if profile not in PROFILES:
                raise DriverError("unsupported", f"no profile {profile!r}")
            self.slots[client] = Slot(self, client, profile)
            return None
        slot = self.slots.get(client)
        if slot is None:
            raise DriverError("unknown-client", f"no client {client!r}")
        if command == "inspect":
            user = slot.client.get_logged_in_user()
            return {"status": slot.client.get_connection_status(),
                    "backgroundTaskEnabled": slot.client.background_task_enabled(),
                    "loggedInUser": user.get("uid") if user else None}
        if command in ENVIRONMENT:
            return environment(slot, command, args)
        if command in DEVICE:
            return device_event(slot, command, args)
        return call(slot, command, args)

    async def settle(self) -> list[dict]:
        for slot in list(self.slots.values()):
            await slot.device.settle()
        return [{"client": slot.name, "port": sock.port, "state": sock.state, "sent": sock.sent,
                 "received": sock.received}
                for slot in self.slots.values() for sock in slot.device.sockets if sock.port is not None]

    def end(self) -> None:
        for slot in self.slots.values():
            slot.client.shutdown()
            slot.device.discard()
        self.slots.clear()

    def sdk_error(self, error: BaseException):
        return (error.code, error.description) if isinstance(error, ChatError) else None


if __name__ == "__main__":
    run(PythonSDKAdapter, description=__doc__)
