"""The public API of the SDK, shaped after the documented CometChat iOS calls: init with
app settings, login/logout, connect/disconnect/ping, configureServices and
backgroundTaskEnabled, connection status and listeners, presence listeners, getUser and a
paged users request. Calls that need the server return an asyncio Future that ends with
the result or raises ChatError.

The connection logic lives in ConnectionMachine (pure); this class carries out its actions
with the injected Clock and the v1 transport."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from . import connection as cm
from . import errors
from .bugs import active_bugs
from .clock import Clock, Timer
from .errors import ChatError
from .profile import Profile
from .transport import Device, V1Socket

Presence = Union[str, list]   # "all", "friends", "none", or a list of roles


@dataclass
class AppSettings:
    """AppSettingsBuilder's choices (000, Enable Manual Mode; 004, Presence Subscription;
    003, reconnectKickEnable). None means the profile's default."""
    auto_establish_socket_connection: Optional[bool] = None
    presence: Presence = "all"
    region: str = "us"
    reconnect_kick_enable: bool = False
    device_id: str = "default"
    platform: str = "mobile"


class Instrumentation:
    """Hooks for tests: every connection event (also with no listener) and socket
    attempt. The default does nothing. What listeners receive is seen by the listeners."""

    def socket_opening(self) -> None: ...
    def connection_event(self, name: str, listeners: list, error: Optional[ChatError], reason: Optional[str]) -> None: ...


def _done(value: Any = None, error: Optional[ChatError] = None) -> asyncio.Future:
    future = asyncio.get_running_loop().create_future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
    return future


def _after_init(method: Callable[..., asyncio.Future]) -> Callable[..., asyncio.Future]:
    """A call made before init() fails with ERR_NOT_INITIALIZED (D28): without the app
    settings the SDK knows neither the connection mode nor the presence subscription."""
    @functools.wraps(method)
    def checked(self: "ChatClient", *args: Any, **kwargs: Any) -> asyncio.Future:
        if not self.initialized:
            return _done(error=ChatError(errors.NOT_INITIALIZED))
        return method(self, *args, **kwargs)
    return checked


class UsersRequest:
    """A users request with a page size and an optional status filter (004, Get Online
    Users / Get Offline Users); each fetch_next() continues where the last one stopped."""

    def __init__(self, client: "ChatClient", limit: Any, status: Optional[str]):
        self._client = client
        self.limit = limit
        self.status = status
        self._cursor: Optional[str] = None
        self._exhausted = False

    def fetch_next(self) -> asyncio.Future:
        if not self._client.initialized:
            return _done(error=ChatError(errors.NOT_INITIALIZED))
        if self._client._credentials() is None:
            return _done(error=ChatError(errors.NOT_LOGGED_IN))
        limit = self.limit          # the server checks it (ERR_INVALID_LIMIT, 004)
        if "no-invalid-limit" in self._client.bugs and isinstance(limit, int) and limit > 100:
            limit = 100
        if self._exhausted:   # the last page was seen: an empty one, once connected
            error = self._client._connection_error()
            return _done(error=error) if error else _done({"users": [], "next": None})
        reply = self._client._request("users.list", limit=limit, status=self.status, cursor=self._cursor)
        return self._client._then(reply, self._page)

    def _page(self, result: dict) -> dict:
        if "users-request-restarts" not in self._client.bugs:
            self._cursor = result.get("next")
        self._exhausted = result.get("next") is None
        users = [self._client._remember(u) for u in result.get("users", [])]
        return {"users": users, "next": self._cursor}


class ChatClient:
    """One SDK instance (one app process on one device)."""

    def __init__(self, device: Device, clock: Clock, server_url: str, auth_key: str,
                 profile: Profile, instrumentation: Optional[Instrumentation] = None):
        self.device = device
        self.clock = clock
        self.server_url = server_url
        self.auth_key = auth_key
        self.profile = profile
        self.bugs = active_bugs()
        self.instrumentation = instrumentation or Instrumentation()
        self.settings = AppSettings()
        self.initialized = False
        self.machine = cm.ConnectionMachine(profile, auto=True, bugs=self.bugs)
        self._socket: Optional[V1Socket] = None
        self._timers: dict[str, Timer] = {}
        self._call: Optional[asyncio.Future] = None
        self._pending_credentials: Optional[dict] = None   # of a login not yet answered
        self._connection_listeners: dict[str, Any] = {}
        self._user_listeners: dict[str, Any] = {}
        self._users: dict[str, dict] = {}
        # Where the logged-in user is kept: the device's storage, which survives a relaunch.
        self._store: dict[str, Any] = {} if "relaunch-forgets-login" in self.bugs else device.storage
        self._reconnections = 0                 # successful logins the SDK made on its own
        self._last_frame_ms = 0                 # when the server last sent something

    # Setup and session --------------------------------------------------------------

    def init(self, settings: AppSettings) -> asyncio.Future:
        """Applies the settings; in auto mode a user saved by an earlier login is
        connected again at once (000, Default SDK behaviour)."""
        self.settings = settings
        self.initialized = True
        auto = settings.auto_establish_socket_connection
        self.machine.auto = True if auto is None else auto
        if self.machine.auto and self._credentials() is not None and self.machine.socket is None:
            self._run(self.machine.start(None))
        return _done(None)

    @_after_init
    def login(self, uid: Optional[str] = None, auth_key: Optional[str] = None,
              token: Optional[str] = None) -> asyncio.Future:
        """Logs in and saves the user on the device. Auto mode connects now and ends with
        the user; manual mode only saves it, the server checks it at connect() (D11).
        While a user is logged in, or a login is still under way, it fails with
        ERR_ALREADY_LOGGED_IN and changes nothing."""
        if self._has_session():
            return _done(error=ChatError(errors.ALREADY_LOGGED_IN))
        credentials = {"uid": uid, "authKey": auth_key or (None if token else self.auth_key), "token": token}
        self._pending_credentials = credentials
        if not self.machine.auto:
            self._save_login(credentials, {"uid": uid, "status": "offline", "lastActiveAt": 0.0})
            return _done(None)
        return self._start_call("login")

    @_after_init
    def logout(self) -> asyncio.Future:
        """Ends the session, also one whose login is still under way (that login fails)."""
        if not self._has_session():
            return _done(error=ChatError(errors.NOT_LOGGED_IN))
        socket = self._socket if self.machine.socket == "open" else None
        self._store.pop("credentials", None)
        self._store.pop("user", None)
        self._run(self.machine.logout(), logout_socket=socket)
        return _done(None)

    @_after_init
    def connect(self) -> asyncio.Future:
        if self._credentials() is None:
            return _done(error=ChatError(errors.NOT_LOGGED_IN))
        if self.machine.status == cm.CONNECTED:
            return _done(error=ChatError(errors.ALREADY_CONNECTED))
        if self.machine.socket is not None and "double-connect" not in self.bugs:
            return self._join_attempt("connect")   # a connection is already on its way
        return self._start_call("connect")

    @_after_init
    def disconnect(self) -> asyncio.Future:
        self._run(self.machine.disconnect())
        return _done(None)

    @_after_init
    def ping(self) -> asyncio.Future:
        """Manual mode only (000, Maintain long-standing background connection); the
        order of checks is mode, login, connection (D24)."""
        if self.machine.auto and "ping-in-auto" not in self.bugs:
            return _done(error=ChatError(errors.PING_NOT_AVAILABLE))
        if self._credentials() is None:
            return _done(error=ChatError(errors.NOT_LOGGED_IN))
        return self._then(self._request("ping"), lambda result: None)

    def get_logged_in_user(self) -> Optional[dict]:
        return self._store.get("user")

    def get_connection_status(self) -> str:
        return self.machine.status

    def background_task_enabled(self) -> bool:
        return self.machine.background_task_flag

    # Users ---------------------------------------------------------------------------

    @_after_init
    def get_user(self, uid: str) -> asyncio.Future:
        if self._credentials() is None:
            return _done(error=ChatError(errors.NOT_LOGGED_IN))
        return self._then(self._request("users.get", uid=uid), lambda r: self._remember(r["user"]))

    def users_request(self, limit: Any = 30, status: Optional[str] = None) -> UsersRequest:
        return UsersRequest(self, limit, status)

    # Listeners -----------------------------------------------------------------------

    def add_user_listener(self, listener_id: str, listener: Any) -> None:
        """`listener` has on_user_online(user) and on_user_offline(user) (004)."""
        self._user_listeners[listener_id] = listener

    def remove_user_listener(self, listener_id: str) -> None:
        self._user_listeners.pop(listener_id, None)

    def add_connection_listener(self, listener_id: str, listener: Callable[..., None]) -> None:
        """`listener(name, error=None, reason=None)` for connecting, connected,
        disconnected, kicked and error."""
        self._connection_listeners[listener_id] = listener

    def remove_connection_listener(self, listener_id: str) -> None:
        if "connection-listener-not-removed" in self.bugs:
            return
        self._connection_listeners.pop(listener_id, None)

    # App lifecycle and device ------------------------------------------------------------

    def configure_services(self, state: str) -> None:
        """configureServices(.willResignActive / .didBackground) (002, Step 3)."""
        self._run(self.machine.configure_services(state))

    def will_resign_active(self) -> None:
        pass

    def did_background(self) -> None:
        self._run(self.machine.did_background())

    def foreground(self) -> None:
        self._run(self.machine.foreground())

    def network_changed(self, condition: str) -> None:
        """The OS reports a network change. The device itself (Device.set_network) breaks
        the sockets; this only tells the connection logic."""
        self._run(self.machine.network_changed(condition))

    def network_path_changed(self) -> None:
        """The OS reports a network path change (an interface change); the network stays up."""
        self._run(self.machine.network_path_changed())

    def shutdown(self) -> None:
        """The process ends: timers stop, the socket is left to the device."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._socket = None

    # Internals -------------------------------------------------------------------------

    def _credentials(self) -> Optional[dict]:
        return self._store.get("credentials")

    def _has_session(self) -> bool:
        """A user is logged in, or its login is under way."""
        return self._credentials() is not None or self.machine.call == "login"

    def _save_login(self, credentials: dict, user: dict) -> None:
        self._store["credentials"] = credentials
        self._store["user"] = user

    def _start_call(self, kind: str) -> asyncio.Future:
        self._call = asyncio.get_running_loop().create_future()
        self._call.add_done_callback(lambda f: f.cancelled() or f.exception())
        call = self._call
        self._run(self.machine.start(kind))
        return call

    def _join_attempt(self, kind: str) -> asyncio.Future:
        """The app asks for what the SDK is already doing: it waits for that attempt."""
        if self._call is None:
            self._call = asyncio.get_running_loop().create_future()
            self.machine.call = kind
        return self._call

    def _connection_error(self) -> Optional[ChatError]:
        """Why a request cannot be sent now (D23), or None."""
        if self._socket is None or self.machine.socket != "open":
            return ChatError(errors.NO_INTERNET if self.device.network == "down" else errors.WEBSOCKET_ERROR)
        return None

    def _request(self, op: str, **fields: Any) -> asyncio.Future:
        error = self._connection_error()
        if error is not None:
            return _done(error=error)
        reply = self._socket.request(op, **fields)
        return reply if "no-call-deadline" in self.bugs else self._with_deadline(self._socket, reply)

    def _with_deadline(self, socket: V1Socket, reply: asyncio.Future) -> asyncio.Future:
        """calls.reply-deadline: a reply missing for callTimeout fails the call with
        ERR_WEBSOCKET_ERROR, on the SDK's clock; the connection is left to the keep-alive (D16).
        The socket forgets the request then, so a late reply, or the socket's end, finds
        nothing waiting."""
        deadline = self.clock.call_later(self.profile.call_timeout, lambda: socket.fail(
            reply, ChatError(errors.WEBSOCKET_ERROR, "No reply to the call")))
        reply.add_done_callback(lambda _: deadline.cancel())
        return reply

    def _then(self, source: asyncio.Future, transform: Callable[[Any], Any]) -> asyncio.Future:
        target = asyncio.get_running_loop().create_future()

        def relay(done: asyncio.Future) -> None:
            if done.exception() is not None:
                return target.set_exception(done.exception())
            try:
                target.set_result(transform(done.result()))
            except (KeyError, TypeError, AttributeError, ValueError):   # a reply the SDK cannot read
                target.set_exception(ChatError(errors.MALFORMED_REPLY))
        source.add_done_callback(relay)
        return target

    def _remember(self, user: dict) -> dict:
        """Keeps the latest copy of each user (the SDK's user cache)."""
        if "blocked-flags-swapped" in self.bugs and "blockedByMe" in user:
            user = dict(user, blockedByMe=user.get("hasBlockedMe"), hasBlockedMe=user["blockedByMe"])
        cached = self._users.get(user.get("uid"))
        if cached is not None and "stale-last-active" in self.bugs:
            user = dict(user, lastActiveAt=cached["lastActiveAt"])
        self._users[user.get("uid")] = user
        return user

    def _run(self, actions: list, logout_socket: Optional[V1Socket] = None) -> None:
        for action in actions:
            self._apply(action, logout_socket)
        if self.machine.socket is None:
            self._socket = None               # the server ends it (kick, refusal, logout)

    def _apply(self, action: Any, logout_socket: Optional[V1Socket]) -> None:
        if isinstance(action, cm.StartTimer):
            self._cancel_timer(action.name)
            name = action.name
            # The uptime clock stops while the device sleeps (DeviceClock, counts_sleep).
            uptime = {"counts_sleep": False} if "uptime-timers" in self.bugs else {}
            self._timers[name] = self.clock.call_later(action.seconds, lambda: self._timer_fired(name), **uptime)
        elif isinstance(action, cm.CancelTimer):
            self._cancel_timer(action.name)
        elif isinstance(action, cm.OpenSocket):
            self._open(action.reconnect)
        elif isinstance(action, cm.CloseSocket):
            if self._socket is not None:
                socket, self._socket = self._socket, None
                if "waits-for-server-close" in self.bugs:
                    socket.close(action.code, deadline=None, end_after_handshake=False)
                else:
                    # transport.close-deadline: on the SDK's clock, like its other timers.
                    deadline = self.clock.call_later(self.profile.close_timeout, socket.abort)
                    socket.close(action.code, deadline=deadline)
        elif isinstance(action, cm.DropSocket):
            if self._socket is not None:
                socket, self._socket = self._socket, None
                socket.abort()
        elif isinstance(action, cm.SendLogout):
            if logout_socket is not None:
                logout_socket.request("logout").add_done_callback(lambda f: f.exception())
            self._socket = None
        elif isinstance(action, cm.SendKeepAlive):
            if self._socket is not None:
                self._socket.request("ping").add_done_callback(self._keep_alive_reply)
        elif isinstance(action, cm.Emit):
            self._emit(action)
        elif isinstance(action, cm.FinishCall):
            self._finish_call(action.error)

    def _timer_fired(self, name: str) -> None:
        self._timers.pop(name, None)
        if name == cm.KEEP_ALIVE and self._idle_too_long():
            self._run([cm.DropSocket()] + self.machine.socket_closed())
            return
        self._run(self.machine.timer_fired(name))

    def _idle_too_long(self) -> bool:
        """The seeded `wall-clock-idle-check`: a silence from the server longer than a
        ping and its deadline is read as a dead connection, however late the timer ran."""
        limit = (self.profile.keep_alive_interval + self.profile.reply_timeout) * 1000
        return ("wall-clock-idle-check" in self.bugs and self.machine.socket == "open"
                and self.clock.now_ms() - self._last_frame_ms > limit)

    def _cancel_timer(self, name: str) -> None:
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    def _open(self, reconnect: bool) -> None:
        self.instrumentation.socket_opening()
        socket = V1Socket(self.device, self.server_url, self._on_event, self._on_closed)
        self._socket = socket
        socket.opening = self.device.track(self._open_and_login(socket, reconnect))

    async def _open_and_login(self, socket: V1Socket, reconnect: bool) -> None:
        try:
            await socket.open()
        except ChatError as error:
            if getattr(error, "resolver", False) and "dns-failure-ends-loop" in self.bugs:
                self._run(self.machine.login_refused(error))
            return                             # _on_closed has told the machine
        if socket is not self._socket:
            return                             # abandoned at the open deadline
        self._run(self.machine.socket_opened())
        credentials = self._credentials() or self._pending_credentials or {}
        presence = self.settings.presence
        if isinstance(presence, list):
            presence = {"mode": "all"} if "unsubscribed-roles" in self.bugs else {"mode": "roles", "roles": presence}
        else:
            presence = {"mode": presence}
        if reconnect and "presence-lost-after-reconnect" in self.bugs:
            presence = {"mode": "none"}
        reply = socket.request(
            "login", uid=credentials.get("uid"), authKey=credentials.get("authKey"),
            token=credentials.get("token"), deviceId=self.settings.device_id,
            platform=self.settings.platform, presence=presence, reconnect=reconnect,
            reconnectKickEnable=self.settings.reconnect_kick_enable)
        reply.add_done_callback(lambda f: self._login_reply(socket, credentials, f, reconnect))

    def _login_reply(self, socket: V1Socket, credentials: dict, reply: asyncio.Future, reconnect: bool) -> None:
        if socket is not self._socket:
            reply.exception()
            return
        error = reply.exception()
        if isinstance(error, ChatError) and error.code not in (errors.WEBSOCKET_ERROR, errors.NO_INTERNET):
            self._run(self.machine.login_refused(error))
            return
        if error is not None:
            if reconnect and "lost-login-ends-loop" in self.bugs:
                self._run(self.machine.login_refused(error))
            return                             # the socket ended; _on_closed handles it
        self._last_frame_ms = self.clock.now_ms()
        user = self._remember(reply.result()["user"])
        self._save_login(credentials, user)
        if reconnect:
            self._reconnections += 1
        self._run(self.machine.login_accepted())

    def _keep_alive_reply(self, reply: asyncio.Future) -> None:
        if reply.exception() is None:
            self._last_frame_ms = self.clock.now_ms()
            self._run(self.machine.reply_received())

    def _on_closed(self, socket: V1Socket) -> None:
        if socket is self._socket:
            self._socket = None
            self._run(self.machine.closed_by_server(socket.close_code))

    def _on_event(self, socket: V1Socket, frame: dict) -> None:
        if socket is not self._socket:
            return
        name = frame.get("event")
        if name == "device.kicked":
            self._run(self.machine.kicked(frame.get("reason", "")))
        elif name in ("user.online", "user.offline"):
            user = self._remember(frame["user"])
            change = "online" if name == "user.online" else "offline"
            if "hide-blocked-presence" in self.bugs and user.get("blockedByMe"):
                return
            for listener in list(self._user_listeners.values()) * self._handler_copies("presence-twice-after-reconnect"):
                callback = getattr(listener, f"on_user_{change}", None)
                if callback is not None:
                    callback(user)

    def _emit(self, event: cm.Emit) -> None:
        listeners = list(self._connection_listeners.items())
        self.instrumentation.connection_event(event.name, [i for i, _ in listeners], event.error, event.reason)
        for _, listener in listeners * self._handler_copies("listener-twice-after-reconnect"):
            listener(event.name, error=event.error, reason=event.reason)

    def _handler_copies(self, bug: str) -> int:
        """How many times each listener is called per event: once, or with the seeded
        bug, once more for every reconnection that registered the handlers again."""
        return 1 + (self._reconnections if bug in self.bugs else 0)

    def _finish_call(self, error: Optional[ChatError]) -> None:
        call, self._call = self._call, None
        if call is None or call.done():
            return
        if error is not None:
            call.set_exception(error)
        else:
            call.set_result(self.get_logged_in_user())
