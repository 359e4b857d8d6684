"""ControlClient and MockChatServer against a real `mockchat serve`."""

import pytest

from mockchat import BadRequest, ControlClient, MockChatServer, NotFound, ServerStartError, Unauthorized, Unreachable


@pytest.fixture
def server():
    with MockChatServer(clock="virtual") as running:
        yield running


def test_a_server_starts_on_a_free_port_with_a_virtual_clock(server):
    assert server.port and server.port != 8080
    health = server.control.health()
    assert health["ok"] is True and health["clock"] == "virtual"
    assert server.ws_url == f"ws://127.0.0.1:{server.port}/v1/ws"


def test_the_clock_moves_only_when_advanced(server):
    before = server.control.clock()["now"]
    assert server.control.advance(seconds=30)["now"] == pytest.approx(before + 30)
    assert server.control.advance(ms=1500)["now"] == pytest.approx(before + 31.5)
    with pytest.raises(ValueError):
        server.control.advance()


def test_refusals_are_typed_errors_naming_the_route(server):
    with pytest.raises(BadRequest) as bad:
        server.control.fault("teleport")
    assert bad.value.status == 400 and "teleport" in bad.value.message and "POST /control/faults" in str(bad.value)
    with pytest.raises(NotFound):
        server.control.push(uid="ghost", frame="hello")
    with pytest.raises(NotFound):
        server.control.request("GET", "/control/reset")


def test_faults_are_set_listed_and_cleared_and_reset_clears_them(server):
    server.control.fault("refuseConnections")
    assert server.control.faults()["refuseConnections"] is True
    server.control.clear_faults()
    assert server.control.faults()["refuseConnections"] is False
    server.control.fault("stall")
    server.reset()
    assert server.control.faults()["stallAfterHandshake"] is False


def test_the_trace_is_read_page_by_page(server):
    for _ in range(7):
        server.control.advance(ms=10)
    first = server.control.trace(limit=3)
    assert [entry["seq"] for entry in first] == [1, 2, 3]
    everything = list(server.control.trace_entries(page=3))
    assert [entry["seq"] for entry in everything] == list(range(1, 8))
    assert all(entry["text"].startswith("clock advanced 10 ms") for entry in everything)


def test_app_settings_are_loaded_at_start_and_again_after_reset():
    with MockChatServer(app={"heartbeatTimeout": 45}) as server:
        loads = [e for e in server.control.trace_entries() if e.get("route") == "POST /control/fixtures"]
        assert loads and loads[0]["frame"]["app"]["heartbeatTimeout"] == 45
        server.reset()
        after = list(server.control.trace_entries())
        assert after[0]["route"] == "POST /control/reset"
        assert [e["frame"]["app"]["heartbeatTimeout"] for e in after if e.get("route") == "POST /control/fixtures"] == [45]


def test_a_control_token_guards_the_control_api():
    with MockChatServer(control_token="s3cret") as server:
        assert server.control.health()["ok"] is True
        with pytest.raises(Unauthorized):
            ControlClient.for_port(server.port).presence()
        assert ControlClient.for_port(server.port, token="s3cret").presence() == []


def test_no_server_and_a_bad_binary_are_clear_errors(tmp_path):
    with pytest.raises(Unreachable):
        ControlClient("http://127.0.0.1:9", timeout=2).health()
    with pytest.raises(ServerStartError, match="not an executable"):
        MockChatServer(binary=str(tmp_path / "nothing"))
    with pytest.raises(ServerStartError, match="did not start"):
        MockChatServer(extra_args=["--port-typo"]).start()
