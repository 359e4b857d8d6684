"""The connection state machine. Pure: every input returns the actions the client must
carry out (open or close a socket, arm or cancel a timer, raise a connection event, finish
the app's pending call). It never touches a socket or a clock itself.

Behaviour and its sources (documents in MockChat's seeds; decisions in docs/CONFORMANCE.md):
- login connects in auto mode, manual mode connects on connect() (000, Auto Mode; Manual
  Mode SDK behaviour; D11);
- a lost connection in the foreground is retried on the 003 backoff schedule; a refusal by
  the server raises `error` and ends the loop; a kick ends it too (003, Automatic
  reconnection; D7, D17);
- no network pauses the loop; a network change or a return to the foreground resets the
  schedule (003, Reconnection intervals);
- the background closes at once (auto), keeps the socket for the 30 s background task when
  services are configured (002), keeps it 120 s for Nexconn (003), or pings once and lets
  the server's 30 s idle rule decide (manual mode, 000; D1, D2, D5, D8, D9);
- a keep-alive ping every 10 s whose reply must come within 10 s (D16); an upgrade left
  unanswered for 10 s is abandoned and counts as a failed attempt (reconnection.open-deadline);
- every login, connect() or init() starts a round from the first wait; a connect()
  without network fails and changes nothing; the background ends a call still waiting
  (D32, D33).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import errors
from .backoff import Backoff
from .errors import ChatError
from .profile import BACKOFF_REPEAT, BACKOFF_STEPS, Profile

CONNECTED, CONNECTING, DISCONNECTED, KICKED = "connected", "connecting", "disconnected", "kicked"
UP, DOWN, WEAK = "up", "down", "weak"

# Timer names.
KEEP_ALIVE, REPLY, RECONNECT, TASK, BACKGROUND_CLOSE = "keepAlive", "reply", "reconnect", "task", "backgroundClose"
OPEN = "open"   # the deadline for the answer to an attempt's upgrade


@dataclass(frozen=True)
class OpenSocket:
    """Open a socket and send login; `reconnect` marks attempts the SDK makes on its own."""
    reconnect: bool


@dataclass(frozen=True)
class CloseSocket:
    """Close the current socket with this code (1000 disconnect, 1001 background)."""
    code: int


@dataclass(frozen=True)
class DropSocket:
    """Give up on the current socket at once (its replies stopped coming)."""


@dataclass(frozen=True)
class SendLogout:
    """Send `logout`; the server closes the socket after its reply."""


@dataclass(frozen=True)
class SendKeepAlive:
    """Send a `ping` request."""


@dataclass(frozen=True)
class StartTimer:
    name: str
    seconds: float


@dataclass(frozen=True)
class CancelTimer:
    name: str


@dataclass(frozen=True)
class Emit:
    """A connection event for the listeners: connecting, connected, disconnected, kicked, error."""
    name: str
    error: Optional[ChatError] = None
    reason: Optional[str] = None


@dataclass(frozen=True)
class FinishCall:
    """The pending login() or connect() ends, with this error or successfully."""
    error: Optional[ChatError] = None


class ConnectionMachine:
    def __init__(self, profile: Profile, auto: bool, bugs: frozenset = frozenset()):
        self.profile = profile
        self.auto = auto
        self.bugs = bugs
        self.status = DISCONNECTED
        self.network = UP
        self.in_background = False
        self.socket: Optional[str] = None          # None, "opening" or "open"
        self.wanted = False                        # the SDK should hold a connection
        self.paused = False                        # the loop waits for the network to return
        self.call: Optional[str] = None            # "login" or "connect" while one waits
        self.services_configured = False
        self.hold: Optional[str] = None           # TASK or BACKGROUND_CLOSE: why the socket may stay in the background
        self.background_task_flag = False
        self.keep_alive_stopped = False
        first = 1 if "backoff-shift" in bugs else 0
        self.backoff = Backoff(BACKOFF_STEPS, BACKOFF_REPEAT, first_index=first)

    # App calls -----------------------------------------------------------------------

    def start(self, call: Optional[str]) -> list:
        """login() in auto mode, connect(), or init() resuming a saved user (call None)."""
        waits_for_network = call is None or (call == "login" and self.profile.retry_login_until_answered)
        if self.network == DOWN and not waits_for_network:
            return [FinishCall(ChatError(errors.NO_INTERNET))]   # fails at once, changes nothing
        self.wanted = True
        self.call = call
        self.backoff.reset()                 # a new round starts from the first wait
        actions: list = [CancelTimer(RECONNECT)]
        if self.network == DOWN:
            self.paused = True   # the loop waits for the network (003, example step 1)
            return actions
        return actions + self._set_status(CONNECTING) + self._open(reconnect=False)

    def disconnect(self) -> list:
        """Stops everything until connect(), a login or a relaunch (D15); a login or
        connect() under way fails."""
        self.wanted = False
        actions = self._stop_timers()
        if self.socket is not None:
            actions.append(CloseSocket(1000))
            self.socket = None
        return actions + self._set_status(DISCONNECTED) + self._fail_waiting_call(ChatError(errors.WEBSOCKET_ERROR))

    def logout(self) -> list:
        self.wanted = False
        actions = self._stop_timers()
        if self.socket == "open":
            actions.append(SendLogout())
        elif self.socket is not None:
            actions.append(CloseSocket(1000))
        self.socket = None
        return actions + self._set_status(DISCONNECTED) + self._fail_waiting_call(ChatError(errors.NOT_LOGGED_IN))

    def configure_services(self, state: str) -> list:
        if self.profile.background_task_window is None:
            return []
        self.services_configured = True
        if state == "didBackground" and self.in_background and self.hold != TASK and self.socket == "open":
            return self._start_task()
        return []

    # Environment -----------------------------------------------------------------------

    def did_background(self) -> list:
        if self.in_background:
            return []
        self.in_background = True
        if self.services_configured and self.profile.background_task_window is not None and self.socket:
            return self._start_task()
        self.background_task_flag = False     # no connection to keep: no task (D9)
        if not self.auto:
            # Manual mode: one ping now, then only the app's pings keep the socket (D5).
            actions = self._stop_waiting_loop()
            if self.socket == "open":
                self.keep_alive_stopped = True
                actions += [CancelTimer(KEEP_ALIVE), CancelTimer(REPLY), SendKeepAlive()]
            return actions
        if self.profile.close_at_once_in_background:
            return self._suspend()
        # 003: the connection, or the attempt to make one, may go on for a while (D8).
        self.hold = BACKGROUND_CLOSE
        return self._stop_waiting_loop() + [StartTimer(BACKGROUND_CLOSE, self.profile.background_disconnect_after)]

    def foreground(self) -> list:
        if not self.in_background:
            return []
        self.in_background = False
        self.hold = None
        actions: list = [CancelTimer(TASK), CancelTimer(BACKGROUND_CLOSE)]
        if "no-foreground-reset" not in self.bugs:
            self.backoff.reset()
        if self.socket == "open":
            if self.keep_alive_stopped:
                # The heartbeat starts again now: the server has heard nothing since the background.
                self.keep_alive_stopped = False
                return actions + self._keep_alive_now()
            return actions
        if self.socket is None and self.auto and self.wanted and self.status != KICKED:
            if self.network == DOWN:
                self.paused = True
                return actions
            # 003, Reconnection intervals: back in the foreground, try at once.
            return actions + self._set_status(CONNECTING) + self._open(reconnect=True)
        return actions

    def network_changed(self, condition: str) -> list:
        """No network pauses the loop; any change resets the schedule (003, Reconnection
        intervals). A socket the lost network breaks ends through socket_closed()."""
        previous, self.network = self.network, condition
        if previous == condition:
            return []
        self.backoff.reset()
        backing_off = self.socket is None and self.status == CONNECTING
        if condition == DOWN:
            if not backing_off or "no-network-pause" in self.bugs:
                return []
            self.paused = True
            return [CancelTimer(RECONNECT)] + self._set_status(DISCONNECTED)
        if self.paused:
            self.paused = False
            if self._loop_may_continue():
                return self._retry()
            return self._fail_waiting_call(ChatError(errors.NO_INTERNET))
        if backing_off:
            return [StartTimer(RECONNECT, self.backoff.next_delay())]
        return []

    def network_path_changed(self) -> list:
        """The OS reports a new network path while the network stays up (an interface
        change): a live connection is checked at once with a ping, and a waiting loop
        starts again from the first wait (reconnection.network-change-probes)."""
        if "ignores-network-change" in self.bugs or self.network == DOWN:
            return []
        self.backoff.reset()
        heartbeat_runs = not self.in_background or self.hold is not None
        if self.socket == "open" and heartbeat_runs and not self.keep_alive_stopped:
            return self._keep_alive_now()
        if self.socket is None and self.status == CONNECTING and not self.paused:
            return [StartTimer(RECONNECT, self.backoff.next_delay())]
        return []

    # Socket and server -------------------------------------------------------------------

    def login_accepted(self) -> list:
        self.socket = "open"
        if "no-backoff-reset-on-success" not in self.bugs:
            self.backoff.reset()
        actions: list = [CancelTimer(REPLY), CancelTimer(RECONNECT)]
        actions += self._set_status(CONNECTED)
        if self.call is not None:
            actions.append(FinishCall())
            self.call = None
        if not self.in_background or self.hold is not None:
            actions.append(StartTimer(KEEP_ALIVE, self.profile.keep_alive_interval))
        else:
            self.keep_alive_stopped = True   # a login made in the background: the heartbeat waits for the foreground
        return actions

    def login_refused(self, error: ChatError) -> list:
        """The server answered login with an error: the loop ends (003 tip; D17)."""
        self.socket = None
        actions = [CancelTimer(REPLY), CancelTimer(RECONNECT), Emit("error", error=error)]
        return actions + self._set_status(DISCONNECTED) + self._fail_waiting_call(error)

    def socket_opened(self) -> list:
        """The upgrade was answered and the login sent: its reply has the login deadline."""
        if self.socket != "opening":
            return []
        return [CancelTimer(OPEN), StartTimer(REPLY, self.profile.reply_timeout)]

    def reply_received(self) -> list:
        if "stale-pong-timer" in self.bugs:
            return []
        return [CancelTimer(REPLY)]

    def socket_closed(self) -> list:
        """The socket ended without the SDK asking (server close, reset, refused open)."""
        if self.socket is None:
            return []
        if self.socket == "opening":
            self.socket = None
            return [CancelTimer(OPEN), CancelTimer(REPLY)] + self._attempt_failed()
        self.socket = None
        self.keep_alive_stopped = False
        actions = [CancelTimer(KEEP_ALIVE), CancelTimer(REPLY)]
        if self.status == KICKED:
            return actions
        if self.in_background and not self.auto:
            self.wanted = False      # manual mode: only connect() brings it back (000, Reconnection)
        if "no-disconnected-before-retry" in self.bugs and self._loop_may_continue():
            return actions + self._retry()
        actions += self._set_status(DISCONNECTED)
        if self._loop_may_continue():
            actions += self._retry()
        return actions

    def closed_by_server(self, code: Optional[int]) -> list:
        """The socket ended with the server's close `code` (None: no close frame). The
        code still tells what a lost frame would have: 4001 is a kick, 4004 and 4003
        refuse the login (docs/PROTOCOL.md, close codes)."""
        if code == 4001 and self.socket is not None and "reconnect-after-kick" not in self.bugs:
            return self.kicked("closed with 4001")
        if code == 4004 and self.socket == "opening":
            return self.login_refused(ChatError(errors.RECONNECT_KICK_REFUSED))
        if code == 4003 and self.socket == "opening":
            return self.login_refused(ChatError(errors.WEBSOCKET_ERROR))
        return self.socket_closed()

    def kicked(self, reason: str) -> list:
        """device.kicked: another device took over; nothing reconnects (003; D17)."""
        if "reconnect-after-kick" in self.bugs:
            return []
        self.socket = None
        actions = self._stop_timers() + self._set_status(KICKED, reason=reason)
        if "disconnected-after-kick" in self.bugs:
            actions.append(Emit(DISCONNECTED))
        return actions + self._fail_waiting_call(ChatError(errors.WEBSOCKET_ERROR))

    # Timers ---------------------------------------------------------------------------

    def timer_fired(self, name: str) -> list:
        if name == KEEP_ALIVE and self.socket == "open":
            return self._keep_alive_now()
        if name == REPLY and self.socket is not None:
            # No reply in time: a heartbeat timeout (003, weak network).
            return [DropSocket()] + self.socket_closed()
        if name == OPEN and self.socket == "opening":
            # The upgrade was never answered: the attempt is abandoned and the loop goes on
            # (003, weak network: reconnection goes on until a connection succeeds).
            return [DropSocket()] + self.socket_closed()
        stale = "reconnect-timer-survives-logout" in self.bugs
        if name == RECONNECT and self.socket is None and (self._loop_may_continue() or stale):
            return self._set_status(CONNECTING) + self._open(reconnect=True)
        if name == TASK:
            self.hold = None
            self.background_task_flag = False
            if "no-background-window" in self.bugs:
                return []
            if not self.auto:
                self.wanted = False
            return self._suspend()
        if name == BACKGROUND_CLOSE:
            self.hold = None
            return self._suspend()
        return []

    # Helpers --------------------------------------------------------------------------

    def _loop_may_continue(self) -> bool:
        """Whether a lost or failed connection is retried: wanted, not kicked, and the app
        in the foreground (D14)."""
        return self.wanted and self.status != KICKED and not self.in_background

    def _open(self, reconnect: bool) -> list:
        self.socket = "opening"
        self.paused = False
        deadline = [] if "no-open-deadline" in self.bugs else [StartTimer(OPEN, self.profile.open_timeout)]
        return [OpenSocket(reconnect), *deadline]

    def _retry(self) -> list:
        """The next attempt after the backoff wait, or a pause while there is no network."""
        if self.network == DOWN and "no-network-pause" not in self.bugs:
            self.paused = True
            return [CancelTimer(RECONNECT)] + self._set_status(DISCONNECTED)
        return self._set_status(CONNECTING) + [StartTimer(RECONNECT, self.backoff.next_delay())]

    def _attempt_failed(self) -> list:
        """An attempt ended before the login was answered: the loop goes on, unless a
        connect() (D13) or a CometChat login (D12) waits for it; then the round ends."""
        call_retries = self.call is None or (self.call == "login" and self.profile.retry_login_until_answered)
        if call_retries and self._loop_may_continue():
            return self._retry()
        code = errors.NO_INTERNET if self.network == DOWN else errors.WEBSOCKET_ERROR
        return self._set_status(DISCONNECTED) + self._fail_waiting_call(ChatError(code))

    def _fail_waiting_call(self, error: ChatError) -> list:
        """A login or connect() under way fails; a failed login leaves no user to reconnect."""
        if self.call is None:
            return []
        if self.call == "login":
            self.wanted = False
        self.call = None
        return [FinishCall(error)]

    def _start_task(self) -> list:
        self.hold = TASK
        self.background_task_flag = True
        actions: list = [StartTimer(TASK, self.profile.background_task_window)]
        if self.keep_alive_stopped and self.socket == "open":
            self.keep_alive_stopped = False   # the task keeps the heartbeat going (002, Step 3)
            actions += self._keep_alive_now()
        return actions

    def _keep_alive_now(self) -> list:
        deadline = [] if "no-pong-deadline" in self.bugs else [StartTimer(REPLY, self.profile.reply_timeout)]
        return [SendKeepAlive(), *deadline, StartTimer(KEEP_ALIVE, self.profile.keep_alive_interval)]

    def _suspend(self) -> list:
        """The background no longer allows a connection: the socket closes (1001), the
        loop stops, and a login or connect() under way fails."""
        self.paused = False
        actions: list = [CancelTimer(RECONNECT)]
        if self.socket is not None:
            actions += [CancelTimer(KEEP_ALIVE), CancelTimer(OPEN), CancelTimer(REPLY), CloseSocket(1001)]
            self.socket = None
        self.keep_alive_stopped = False
        if self.status != KICKED:
            actions += self._set_status(DISCONNECTED)
        return actions + self._fail_waiting_call(ChatError(errors.WEBSOCKET_ERROR))

    def _stop_waiting_loop(self) -> list:
        """Entering the background stops a loop that waits (backoff, or no network); in
        manual mode only connect() starts it again (000, Reconnection)."""
        if self.socket is not None:
            return []
        if not self.auto:
            self.wanted = False
        self.paused = False
        actions: list = [CancelTimer(RECONNECT)]
        if self.status == CONNECTING:
            actions += self._set_status(DISCONNECTED)
        return actions + self._fail_waiting_call(ChatError(errors.WEBSOCKET_ERROR))

    def _stop_timers(self) -> list:
        """The connection's timers; the background task and delay run on (they end by time)."""
        self.paused = False
        if "reconnect-timer-survives-logout" in self.bugs:
            return [CancelTimer(n) for n in (KEEP_ALIVE, OPEN, REPLY)]
        return [CancelTimer(n) for n in (KEEP_ALIVE, OPEN, REPLY, RECONNECT)]

    def _set_status(self, status: str, reason: Optional[str] = None) -> list:
        if status == self.status:
            return []
        self.status = status
        return [Emit(status, reason=reason)]
