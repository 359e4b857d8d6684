"""The driver adapter's protocol handling, without a server."""

import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "driver"))

import mockchat_driver  # noqa: E402
from mockchat.driver import Driver  # noqa: E402  (importable once mockchat_driver is)

START = {"type": "start", "id": 1, "scenario": "t", "server": {"url": "ws://127.0.0.1:9/v1/ws"},
         "app": {"authKey": "k"}, "clock": {"mode": "virtual", "now": 1_700_000_000_000}}


def exchange(*messages):
    written = []
    driver = Driver(mockchat_driver.PythonSDKAdapter(), written.append)

    async def run():
        for message in messages:
            await driver.handle(message)
    asyncio.run(run())
    return [m for m in written if m.get("type") == "reply"]


def test_hello_speaks_protocol_1_with_virtual_time():
    hello = mockchat_driver.PythonSDKAdapter().hello()
    assert hello["protocol"] == 1 and hello["virtualTime"] and "advance" not in hello["commands"]
    assert {"create", "init", "login", "fetchNext", "relaunch", "inspect"} <= set(hello["commands"])


def test_unknown_command_and_unknown_client_are_protocol_errors():
    replies = exchange(START,
                       {"type": "command", "id": 2, "client": "a", "command": "teleport", "args": {}},
                       {"type": "command", "id": 3, "client": "a", "command": "create", "args": {"profile": "cometchat-ios"}},
                       {"type": "command", "id": 4, "client": "a", "command": "teleport", "args": {}},
                       {"type": "command", "id": 5, "client": "zz", "command": "ping", "args": {}})
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5]
    assert replies[1]["error"]["code"] == "unknown-command"
    assert replies[2]["ok"] is True
    assert replies[3]["error"]["code"] == "unknown-command"
    assert replies[4]["error"]["code"] == "unknown-client"


def test_a_request_before_start_fails():
    reply, = exchange({"type": "settle", "id": 7})
    assert reply["ok"] is False and reply["error"]["code"] == "failed"


def test_calls_without_a_server_give_the_sdk_error():
    replies = exchange(START,
                       {"type": "command", "id": 2, "client": "a", "command": "create", "args": {}},
                       {"type": "command", "id": 3, "client": "a", "command": "init", "args": {}},
                       {"type": "command", "id": 4, "client": "a", "command": "ping", "args": {}},
                       {"type": "command", "id": 5, "client": "a", "command": "getUser", "args": {"uid": "bob"}})
    assert replies[3]["result"]["error"]["code"] == "ERROR_PING_NOT_AVAILABLE"
    assert replies[4]["result"]["error"]["code"] == "ERR_NOT_LOGGED_IN"


def test_advance_moves_the_clock_and_reports_the_next_deadline():
    replies = exchange(START,
                       {"type": "command", "id": 2, "client": "a", "command": "create", "args": {}},
                       {"type": "advance", "id": 3, "to": 1_700_000_030_000},
                       {"type": "settle", "id": 4})
    assert replies[2]["state"]["now"] == 1_700_000_030_000
    assert replies[2]["state"]["nextDeadline"] is None and replies[2]["state"]["sockets"] == []
