"""The connection state machine alone: inputs in, actions out."""

import pytest

from mockchat_sdk import connection as cm
from mockchat_sdk.errors import ChatError
from mockchat_sdk.profile import PROFILES

COMETCHAT, NEXCONN = PROFILES["cometchat-ios"], PROFILES["nexconn-ios"]


def events(actions):
    return [a.name for a in actions if isinstance(a, cm.Emit)]


def timers(actions):
    return {a.name: a.seconds for a in actions if isinstance(a, cm.StartTimer)}


def connected(profile=COMETCHAT, auto=True, bugs=frozenset()):
    machine = cm.ConnectionMachine(profile, auto=auto, bugs=bugs)
    machine.start("login")
    machine.login_accepted()
    return machine


def test_login_connects_and_starts_the_keep_alive():
    machine = cm.ConnectionMachine(COMETCHAT, auto=True)
    actions = machine.start("login")
    assert events(actions) == ["connecting"]
    assert cm.OpenSocket(reconnect=False) in actions
    actions = machine.login_accepted()
    assert events(actions) == ["connected"] and cm.FinishCall() in actions
    assert timers(actions)[cm.KEEP_ALIVE] == 10


def test_a_lost_connection_is_retried_on_the_backoff_schedule():
    machine = connected(NEXCONN)
    actions = machine.socket_closed()
    assert events(actions) == ["disconnected", "connecting"]
    assert timers(actions) == {cm.RECONNECT: 0.05}
    actions = machine.timer_fired(cm.RECONNECT)
    assert cm.OpenSocket(reconnect=True) in actions
    assert timers(machine.socket_closed()) == {cm.RECONNECT: 0.25}


def test_no_network_pauses_the_loop_and_the_network_coming_back_resets_it():
    machine = connected(NEXCONN)
    machine.socket_closed()
    machine.timer_fired(cm.RECONNECT)
    machine.socket_closed()
    actions = machine.network_changed(cm.DOWN)
    assert cm.CancelTimer(cm.RECONNECT) in actions and machine.status == cm.DISCONNECTED
    actions = machine.network_changed(cm.UP)
    assert events(actions) == ["connecting"] and timers(actions) == {cm.RECONNECT: 0.05}


def test_a_refused_login_raises_error_and_ends_the_loop():
    machine = cm.ConnectionMachine(NEXCONN, auto=True)
    machine.start("login")
    actions = machine.login_refused(ChatError("ERR_USER_DEACTIVATED", "x"))
    assert events(actions) == ["error", "disconnected"]
    assert not machine.wanted and machine.socket_closed() == []


def test_a_kick_is_final():
    machine = connected()
    actions = machine.kicked("another mobile device logged in")
    assert events(actions) == ["kicked"]
    assert machine.socket_closed() == [] and machine.foreground()[-1:] != [cm.OpenSocket(reconnect=True)]
    assert not any(isinstance(a, cm.OpenSocket) for a in machine.foreground())


def test_auto_mode_closes_at_once_in_the_background_and_reconnects_in_the_foreground():
    machine = connected()
    actions = machine.did_background()
    assert cm.CloseSocket(1001) in actions and events(actions) == ["disconnected"]
    actions = machine.foreground()
    assert cm.OpenSocket(reconnect=True) in actions and events(actions) == ["connecting"]


def test_services_keep_the_socket_for_the_30s_task():
    machine = connected()
    machine.configure_services("willResignActive")
    actions = machine.did_background()
    assert timers(actions) == {cm.TASK: 30} and machine.background_task_flag
    actions = machine.timer_fired(cm.TASK)
    assert cm.CloseSocket(1001) in actions and not machine.background_task_flag


def test_manual_mode_pings_once_when_going_to_the_background():
    machine = connected(auto=False)
    actions = machine.did_background()
    assert cm.SendKeepAlive() in actions and cm.CancelTimer(cm.KEEP_ALIVE) in actions


def test_nexconn_disconnects_after_two_minutes_in_the_background():
    machine = connected(NEXCONN)
    assert timers(machine.did_background()) == {cm.BACKGROUND_CLOSE: 120}


def test_keep_alive_without_reply_is_a_heartbeat_timeout():
    machine = connected(NEXCONN)
    actions = machine.timer_fired(cm.KEEP_ALIVE)
    assert cm.SendKeepAlive() in actions and timers(actions)[cm.REPLY] == 10
    actions = machine.timer_fired(cm.REPLY)
    assert actions[0] == cm.DropSocket() and events(actions) == ["disconnected", "connecting"]


@pytest.mark.parametrize("bug", ["backoff-shift"])
def test_the_seeded_backoff_bug_changes_the_schedule(bug):
    machine = connected(NEXCONN, bugs=frozenset([bug]))
    assert timers(machine.socket_closed()) == {cm.RECONNECT: 0.25}


def test_a_4001_close_is_a_kick_even_when_the_frame_was_lost():
    machine = connected()
    actions = machine.closed_by_server(4001)
    assert events(actions) == ["kicked"] and machine.status == cm.KICKED


def test_a_4004_close_refuses_a_login_whose_reply_was_lost():
    machine = cm.ConnectionMachine(NEXCONN, auto=True)
    machine.start("login")
    actions = machine.closed_by_server(4004)
    assert events(actions) == ["error", "disconnected"]
    assert [a.error.code for a in actions if isinstance(a, cm.FinishCall)] == ["ERR_RECONNECT_KICK_REFUSED"]


def test_a_connect_without_network_fails_and_the_paused_loop_still_resumes():
    machine = connected(NEXCONN)
    machine.network_changed(cm.DOWN)
    machine.socket_closed()
    actions = machine.start("connect")
    assert [a.error.code for a in actions if isinstance(a, cm.FinishCall)] == ["ERR_NO_INTERNET"]
    actions = machine.network_changed(cm.UP)
    assert events(actions) == ["connecting"] and timers(actions) == {cm.RECONNECT: 0.05}


def test_no_background_task_without_a_socket():
    machine = cm.ConnectionMachine(COMETCHAT, auto=True)
    machine.configure_services("willResignActive")
    machine.did_background()
    assert not machine.background_task_flag


def test_the_nexconn_window_fails_a_login_still_waiting_for_the_network():
    machine = cm.ConnectionMachine(NEXCONN, auto=True)
    machine.did_background()
    machine.network_changed(cm.DOWN)
    assert machine.start("login") == [cm.CancelTimer(cm.RECONNECT)] and machine.paused
    actions = machine.timer_fired(cm.BACKGROUND_CLOSE)
    assert [a.error.code for a in actions if isinstance(a, cm.FinishCall)] == ["ERR_WEBSOCKET_ERROR"]


def test_a_new_round_starts_from_the_first_wait():
    machine = connected(NEXCONN)
    machine.socket_closed()
    machine.timer_fired(cm.RECONNECT)
    machine.socket_closed()                    # the next wait would be 0.25 s
    machine.disconnect()
    machine.start(None)                        # init() resuming the saved user
    assert timers(machine.socket_closed()) == {cm.RECONNECT: 0.05}


def test_an_unanswered_upgrade_is_abandoned_at_the_open_deadline():
    """reconnection.open-deadline: the attempt ends and the loop goes on (003, weak network)."""
    machine = connected()
    machine.socket_closed()
    actions = machine.timer_fired(cm.RECONNECT)
    assert cm.OpenSocket(reconnect=True) in actions and timers(actions) == {cm.OPEN: 10}
    actions = machine.timer_fired(cm.OPEN)
    assert actions[0] == cm.DropSocket() and timers(actions) == {cm.RECONNECT: 0.25}
    assert machine.status == cm.CONNECTING


def test_an_answered_upgrade_hands_over_to_the_login_deadline():
    machine = connected()
    machine.socket_closed()
    machine.timer_fired(cm.RECONNECT)
    actions = machine.socket_opened()
    assert cm.CancelTimer(cm.OPEN) in actions and timers(actions) == {cm.REPLY: 10}


def test_the_seeded_bug_has_no_open_deadline():
    machine = connected(bugs=frozenset(["no-open-deadline"]))
    machine.socket_closed()
    actions = machine.timer_fired(cm.RECONNECT)
    assert cm.OpenSocket(reconnect=True) in actions and cm.OPEN not in timers(actions)
