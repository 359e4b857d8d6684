"""The driver kit's protocol loop around a toy adapter, and its stdio transport in a
child process (the Python SDK's driver runs the whole catalogue on it: make
python-sdk-scenarios)."""

import asyncio
import json
import subprocess
import sys
import textwrap

from mockchat.driver import CALLS, ENVIRONMENT, QUERIES, Adapter, Driver, DriverError

START = {"type": "start", "id": 1, "scenario": "t", "seed": 3, "server": {"url": "ws://127.0.0.1:9/v1/ws"},
         "app": {"authKey": "k"}, "clock": {"mode": "virtual", "now": 1_000}}


class ToyClock:
    def __init__(self, now):
        self.now, self.timers = now, []

    def now_ms(self):
        return self.now

    def next_deadline(self):
        return min(self.timers, default=None)

    def advance_to(self, to, fire=True):
        self.now = to
        if fire:
            self.timers = [t for t in self.timers if t > to]


class ToyAdapter(Adapter):
    """`login` answers later (a future the test resolves), `getUser` at once, `ping`
    fails with an SDK error, `network` needs a condition."""

    sdk_name = "toy"
    profiles = ["cometchat-ios"]
    commands = ENVIRONMENT + CALLS + QUERIES

    def start(self, scenario):
        self.scenario, self.clients, self.later = scenario, set(), None
        self.clock = ToyClock(scenario.start_ms)
        return self.clock

    def perform(self, client, command, args):
        if command == "create":
            self.clients.add(client)
            self.clock.timers.append(self.clock.now + 500)
            return None
        if client not in self.clients:
            raise DriverError("unknown-client", f"no client {client!r}")
        if command == "login":
            self.later = asyncio.get_running_loop().create_future()
            return self.later
        if command == "getUser":
            return {"uid": args["uid"]}
        if command == "ping":
            raise LookupError("ERR_NOT_LOGGED_IN")
        if command == "network":
            args["condition"]
            self.scenario.emit(client, {"event": "connection", "name": "disconnected", "listeners": []})
            return None
        if command == "inspect":
            return {"status": "disconnected", "backgroundTaskEnabled": False, "loggedInUser": None}
        return None

    def sdk_error(self, error):
        return (str(error.args[0]), "not logged in") if isinstance(error, LookupError) else None


def exchange(*messages, between=None):
    written, adapter = [], ToyAdapter()
    driver = Driver(adapter, written.append)

    async def run():
        for message in messages:
            await driver.handle(message)
            if between:
                between(adapter)
    asyncio.run(run())
    return written


def command(request_id, name, **args):
    return {"type": "command", "id": request_id, "client": "a", "command": name, "args": args}


def test_replies_come_in_order_with_results_state_and_protocol_errors():
    written = exchange(START, command(2, "getUser", uid="bob"), command(3, "create"), command(4, "getUser", uid="bob"),
                       command(5, "getUser"), command(6, "ping"), command(7, "teleport"), command(8, "inspect"),
                       {"type": "advance", "id": 9, "to": 1_400}, {"type": "advance", "id": 10, "to": 1_600},
                       {"type": "end", "id": 11}, {"type": "settle", "id": 12})
    replies = {m["id"]: m for m in written if m["type"] == "reply"}
    assert list(replies) == list(range(1, 13))
    assert replies[2]["error"]["code"] == "unknown-client"
    assert replies[3] == {"type": "reply", "id": 3, "ok": True}
    assert replies[4]["result"] == {"ok": True, "user": {"uid": "bob"}}
    assert replies[5]["error"]["code"] == "bad-arguments"
    assert replies[6]["result"] == {"ok": False, "error": {"code": "ERR_NOT_LOGGED_IN", "description": "not logged in"}}
    assert replies[7]["error"]["code"] == "unknown-command"
    assert replies[8]["state"]["status"] == "disconnected"
    assert replies[9]["state"] == {"now": 1_400, "nextDeadline": 1_500, "sockets": []}
    assert replies[10]["state"] == {"now": 1_600, "nextDeadline": None, "sockets": []}
    assert replies[12]["error"]["code"] == "failed"              # settle after end: no scenario


def test_a_late_outcome_is_pending_then_a_result_event_stamped_with_the_clock():
    def resolve_after_login(adapter):
        if adapter.later is not None and not adapter.later.done():
            adapter.clock.now = 1_250
            adapter.later.set_result({"uid": "alice"})
    written = exchange(START, command(2, "create"), command(3, "login", uid="alice"), {"type": "settle", "id": 4},
                       between=resolve_after_login)
    assert {"type": "reply", "id": 3, "ok": True, "pending": True} in written
    event = next(m for m in written if m["type"] == "event")
    assert event == {"type": "event", "client": "a", "at": 1_250, "event": "result", "command": 3,
                     "result": {"ok": True, "user": {"uid": "alice"}}}


def test_events_of_an_ended_scenario_are_not_reported():
    written = exchange(START, command(2, "create"), command(3, "network", condition="down"), {"type": "end", "id": 4})
    assert [m["event"] for m in written if m["type"] == "event"] == ["connection"]
    assert written[-1] == {"type": "reply", "id": 4, "ok": True}


def test_the_stdio_transport_says_hello_and_answers_lines(tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from toy import ToyAdapter
        from mockchat.driver import run
        run(ToyAdapter)
    """))
    (tmp_path / "toy.py").write_text(open(__file__).read())
    lines = [json.dumps(START), "not json", json.dumps(command(2, "create")), json.dumps({"type": "end", "id": 3})]
    done = subprocess.run([sys.executable, str(script)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=30)
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert out[0]["type"] == "hello" and out[0]["protocol"] == 1 and out[0]["sdk"]["name"] == "toy"
    assert [m["type"] for m in out[1:]] == ["reply", "error", "reply", "reply"]
    assert out[2]["message"].startswith("not a JSON message")
    assert done.returncode == 0, done.stderr


def test_the_hello_carries_the_manifest_only_when_the_adapter_declares_one():
    assert "manifest" not in ToyAdapter().hello()

    class Declaring(ToyAdapter):
        manifest = {"sdk": {"name": "toy", "version": "1.0"}, "parameters": {"keepAliveInterval": 25}}

    assert Declaring().hello()["manifest"]["parameters"] == {"keepAliveInterval": 25}


def test_device_events_check_their_args_by_name():
    from mockchat.driver import DriverError
    from mockchat.driver.device import DnsFailures, read
    assert read("dns", {"fail": 3, "error": "temporary"}) == DnsFailures(3, "temporary")
    assert read("dns", {"fail": 3}) == DnsFailures(3, "notFound")
    assert read("dns", {"fail": True}) == DnsFailures(None, "notFound") and read("dns", {"fail": False}) == (0, "notFound")
    assert read("sleep", {"ms": 25000}) == 25000 and read("throttle", {"periodMs": 0}) == 0
    assert read("networkChange", {}) is None
    for command, args, message in [
            ("dns", {}, "dns needs 'fail': an integer from 0 to 1000000"),
            ("dns", {"fail": 2, "error": "EAI_AGAIN"}, "dns needs 'error': one of notFound, temporary"),
            ("dns", {"fail": 2, "host": "x"}, "dns takes no 'host', only 'fail' and 'error'"),
            ("sleep", {"ms": 0}, "sleep needs 'ms': an integer from 1 to 86400000"),
            ("sleep", {"ms": True}, "sleep needs 'ms': an integer from 1 to 86400000"),
            ("throttle", {"periodMs": 1, "x": 2}, "throttle takes no 'x', only 'periodMs'"),
            ("networkChange", {"to": "cellular"}, "networkChange takes no 'to'"),
            ("networkChange", [], "networkChange needs an object of args")]:
        try:
            read(command, args)
        except DriverError as error:
            assert (error.code, error.message) == ("bad-arguments", message)
        else:
            raise AssertionError(f"{command} {args} accepted")
