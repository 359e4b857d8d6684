"""The `mockchat_server` fixture, its markers, and the trace on a failed test's report,
through pytest's own `pytester` (an inner test session in a temporary folder)."""


def test_the_fixture_yields_a_client_of_a_fresh_virtual_clock_server(pytester):
    pytester.makepyfile("""
        def test_one(mockchat_server):
            assert mockchat_server.health()["clock"] == "virtual"
            mockchat_server.advance(seconds=5)

        def test_two_starts_afresh(mockchat_server):
            assert mockchat_server.clock()["now"] == 1700000000.0
    """)
    pytester.runpytest().assert_outcomes(passed=2)


def test_markers_choose_the_clock_app_settings_and_faults(pytester):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.mockchat(clock="system", app={"heartbeatTimeout": 45})
        @pytest.mark.mockchat_fault("refuseConnections")
        @pytest.mark.mockchat_fault("delay", ms=250)
        def test_marked(mockchat_server):
            assert mockchat_server.health()["clock"] == "system"
            faults = mockchat_server.faults()
            assert faults["refuseConnections"] is True
            assert [link["delayMs"] for link in faults["links"]] == [250]
            loads = [e for e in mockchat_server.trace_entries() if e.get("route") == "POST /control/fixtures"]
            assert loads[0]["frame"]["app"]["heartbeatTimeout"] == 45

        @pytest.mark.mockchat(colour="blue")
        def test_unknown_option(mockchat_server):
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*unknown options*colour*"])


def test_a_failed_test_carries_the_servers_trace(pytester):
    pytester.makepyfile("""
        def test_fails(mockchat_server):
            mockchat_server.fault("stall")
            assert mockchat_server.presence() == ["alice"]

        def test_passes(mockchat_server):
            mockchat_server.fault("stall")
    """)
    result = pytester.runpytest("--mockchat-trace-entries", "5")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*- mockchat trace -*", "1 entries", '*"text":"fault stall on"*'])
    assert result.stdout.str().count("mockchat trace") == 1


def test_a_missing_binary_is_a_clear_setup_error(pytester, monkeypatch):
    monkeypatch.setenv("MOCKCHAT", str(pytester.path / "no-such-mockchat"))
    pytester.makepyfile("""
        def test_needs_server(mockchat_server):
            pass
    """)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*is not an executable file*"])
