"""pytest plugin (loaded through the `pytest11` entry point when the package is installed).

    def test_presence(mockchat_server):                 # a ControlClient
        ...connect your app to mockchat_server.ws_url...
        mockchat_server.advance(seconds=30)

    @pytest.mark.mockchat(clock="system", app={"heartbeatTimeout": 45})
    @pytest.mark.mockchat_fault("blackhole", uid="bob")
    def test_heartbeat(mockchat_server): ...

Each test gets its own `mockchat serve` on a free port (`--mockchat-binary`, $MOCKCHAT or
PATH). When the test fails, the server's trace is attached to the report as a section."""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from .control import ControlClient
from .errors import MockChatError
from .server import MockChatServer

SERVER_KEY = pytest.StashKey[MockChatServer]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockchat")
    group.addoption("--mockchat-binary", default=None, help="the mockchat binary (default: $MOCKCHAT, then PATH)")
    group.addoption("--mockchat-trace-entries", type=int, default=200,
                    help="trace entries attached to a failed test's report (the newest ones; default 200)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mockchat(clock='virtual', fixtures=None, app=None, users=None, args=()): "
                                       "how the test's mockchat_server starts")
    config.addinivalue_line("markers", "mockchat_fault(name, **fields): a control API fault set before the test "
                                       "(POST /control/faults); repeatable")


@pytest.fixture
def mockchat_server(request: pytest.FixtureRequest) -> Iterator[ControlClient]:
    """A fresh `mockchat serve` for this test; yields its control client."""
    marker = request.node.get_closest_marker("mockchat")
    options = dict(marker.kwargs) if marker else {}
    server = MockChatServer(binary=request.config.getoption("--mockchat-binary"),
                            clock=options.pop("clock", "virtual"), fixtures=options.pop("fixtures", None),
                            app=options.pop("app", None), users=options.pop("users", None),
                            extra_args=options.pop("args", ()))
    if options:
        raise pytest.UsageError(f"@pytest.mark.mockchat: unknown options {sorted(options)}")
    server.start()
    request.node.stash[SERVER_KEY] = server
    try:
        for fault in reversed(list(request.node.iter_markers("mockchat_fault"))):
            server.control.fault(*fault.args, **fault.kwargs)
        yield server.control
    finally:
        server.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    report = yield
    server = item.stash.get(SERVER_KEY, None)
    if server is not None and report.failed and call.when in ("call", "setup"):
        report.sections.append(("mockchat trace", trace_text(server, item.config.getoption("--mockchat-trace-entries"))))
    return report


def trace_text(server: MockChatServer, newest: int) -> str:
    """The newest `newest` trace entries, one JSON line each, or why there are none."""
    try:
        entries = list(server.control.trace_entries())
    except MockChatError as error:
        return f"(the trace could not be read: {error})\n{server.output}"
    shown = entries[-newest:] if newest > 0 else entries
    head = f"{len(entries)} entries" + (f", the newest {len(shown)} shown" if len(shown) < len(entries) else "")
    return head + "\n" + "\n".join(json.dumps(entry, separators=(",", ":")) for entry in shown)
