"""An app-level test with the `mockchat_server` fixture: the app's contact list must
show a contact going offline when the contact's phone loses its connection and cannot
get it back (a fault), and the server's trace must show why."""

import asyncio

import pytest
from contact_list import ContactList


async def until(condition, what: str, timeout: float = 10.0) -> None:
    """Waits for `condition()` with a deadline."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@pytest.mark.mockchat(clock="virtual")
def test_a_contact_whose_phone_drops_off_is_shown_offline(mockchat_server):
    async def scenario():
        alice = ContactList(mockchat_server.ws_url, "alice")
        bob = ContactList(mockchat_server.ws_url, "bob")
        try:
            await alice.open()
            await bob.open()
            await until(lambda: "bob" in alice.online, "alice's list to show bob online")
            # Bob's phone loses its connection, and the server takes no new one.
            mockchat_server.fault("refuseConnections")
            mockchat_server.fault("drop", uid="bob")
            await until(lambda: "bob" not in alice.online, "alice's list to show bob offline")
        finally:
            alice.close()
            bob.close()

    asyncio.run(scenario())
    trace = list(mockchat_server.trace_entries())
    dropped = [e for e in trace if e.get("route") == "POST /control/faults" and e["frame"].get("fault") == "drop"]
    offline = [e for e in trace if e["kind"] == "out" and e.get("uid") == "alice"
               and (e.get("frame") or {}).get("event") == "user.offline"]
    assert dropped and offline, "the trace shows the drop and alice being told"
    assert offline[0]["frame"]["user"]["uid"] == "bob" and offline[0]["seq"] > dropped[0]["seq"]
