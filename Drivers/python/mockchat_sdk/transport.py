"""The v1 WebSocket transport (MockChat docs/PROTOCOL.md): one socket, JSON requests with
ids, replies matched to their request, events handed on. This is the layer an SDK swaps
to talk to MockChat instead of its vendor's servers; the connection logic above it stays.

A `Device` stands for the phone the SDK runs on: its network (up, down, weak), its
persistent storage, and the I/O still in flight (so a test can wait until it settled)."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from typing import Any, Callable, Optional

from websockets.asyncio.client import ClientConnection, connect

from . import errors
from .errors import ChatError


class Device:
    """The simulated device: network condition, storage that survives a relaunch, sockets."""

    def __init__(self) -> None:
        self.network = "up"
        self.dns_failures: Optional[int] = 0      # attempts left to fail at name resolution; None: all
        self.dns_error = "notFound"               # which resolver error they fail with (notFound | temporary)
        self.storage: dict[str, Any] = {}
        self.sockets: list[V1Socket] = []
        self._in_flight: set[asyncio.Task] = set()

    def track(self, coro) -> asyncio.Task:
        """Runs `coro` as I/O the device is waiting for (opening a socket, writing)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)
        return task

    async def settle(self, timeout: float = 5.0) -> None:
        """Returns once no I/O is in flight and the loop has run what is ready. The timeout
        (wall time) only keeps a server that never answers from hanging the driver."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            before = self._traffic()
            for _ in range(5):
                await asyncio.sleep(0)
            pending = self._pending()
            if not pending and self._traffic() == before:
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            if pending:
                await asyncio.wait(pending, timeout=remaining)

    def _pending(self) -> set[asyncio.Task]:
        """The tasks in flight, and the reader of every socket whose closing handshake is
        done: the SDK ends that TCP connection itself (transport.close-does-not-wait), and
        learns that the socket is gone only when the reader has seen the end. Close frames
        are not counted in `sent` and `received`, so without this wait the harness could
        find both sides agreeing and go on, and the SDK would see the end at whatever time
        it came.
        An upgrade sent and not yet answered is the server's to answer, or to hold: its
        opening is not waited for (the harness matches the socket with the server's side)."""
        waiting = {sock.opening for sock in self.sockets if sock.awaiting_answer}
        return (self._in_flight - waiting) | {sock.reader for sock in self.sockets if sock.ending}

    def _traffic(self) -> tuple:
        return tuple((s.state, s.sent, s.received) for s in self.sockets)

    def set_network(self, condition: str) -> None:
        """`down` resets every socket (a lost network); `weak` loses what the server sends."""
        self.network = condition
        if condition == "down":
            for sock in list(self.sockets):
                sock.abort()

    def set_dns_failures(self, attempts: Optional[int], error: str = "notFound") -> None:
        """The next `attempts` connections fail at name resolution (None: until cleared),
        with the resolver's error for a name that does not exist or, for `temporary`, for a
        resolver that failed for now."""
        self.dns_failures = attempts
        self.dns_error = error

    def resolve(self, url: str) -> None:
        """The resolver's part of opening `url`: raises the OS's error while DNS fails."""
        if self.dns_failures == 0:
            return
        if self.dns_failures is not None:
            self.dns_failures -= 1
        if self.dns_error == "temporary":
            raise socket.gaierror(socket.EAI_AGAIN, f"Temporary failure in name resolution ({url})")
        raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known ({url})")

    def discard(self) -> None:
        """The app process died: every socket is reset."""
        for sock in list(self.sockets):
            sock.abort()


class _TrackedConnection(ClientConnection):
    """Tells its V1Socket the local port once the TCP connection is made, and whether the
    upgrade waits for the server's answer (a settle does not wait for that)."""

    def __init__(self, owner: "V1Socket", protocol, **options):
        super().__init__(protocol, **options)
        self._owner = owner

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._owner.port = transport.get_extra_info("sockname")[1]
        self._owner.awaiting_answer = self._owner.state == "opening"

    def data_received(self, data: bytes) -> None:
        self._owner.awaiting_answer = False
        super().data_received(data)
        # The closing handshake is complete: the SDK ends the TCP connection itself rather
        # than wait for the server's FIN (transport.close-does-not-wait; RFC 6455, 7.1.1).
        if (self._owner.end_after_handshake and self.protocol.close_rcvd is not None
                and self.protocol.close_sent is not None):
            self.transport.close()

    def connection_lost(self, exc) -> None:
        self._owner.awaiting_answer = False
        super().connection_lost(exc)


class V1Socket:
    """One MockChat protocol v1 WebSocket."""

    def __init__(self, device: Device, url: str,
                 on_event: Callable[["V1Socket", dict], None],
                 on_closed: Callable[["V1Socket"], None]):
        self.device = device
        self.url = url
        self.on_event = on_event
        self.on_closed = on_closed
        self.state = "opening"
        self.port: Optional[int] = None
        self.sent = 0
        self.received = 0
        self._ws: Optional[ClientConnection] = None
        self._handshake: Optional[asyncio.Future] = None
        self.opening: Optional[asyncio.Task] = None   # the task that opens it and logs in
        self.awaiting_answer = False          # the upgrade is sent, no byte of the answer came yet
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self.reader: Optional[asyncio.Task] = None
        self._closed = False
        self.close_code: Optional[int] = None   # the server's close code, once it sent one
        self.end_after_handshake = True       # end the TCP connection once both close frames crossed
        self._close_deadline = None           # the SDK's close deadline timer, while a close runs
        device.sockets.append(self)

    async def open(self) -> None:
        """Handshake. Raises ChatError(ERR_NO_INTERNET / ERR_WEBSOCKET_ERROR)."""
        if self.device.network == "down":
            self._finish()
            raise ChatError(errors.NO_INTERNET)
        try:
            self.device.resolve(self.url)
            # No deadlines of its own: the SDK's open and close deadlines run on its
            # injected clock; abort() ends a handshake or a close left unanswered.
            self._handshake = asyncio.ensure_future(connect(
                self.url, ping_interval=None, compression=None, open_timeout=None, close_timeout=None, proxy=None,
                create_connection=lambda protocol, **options: _TrackedConnection(self, protocol, **options)))
            self._ws = await self._handshake
        except asyncio.CancelledError:
            if not self._closed:
                raise                         # the task itself was cancelled
            raise ChatError(errors.WEBSOCKET_ERROR) from None
        except Exception as failure:
            self._finish()
            code = errors.NO_INTERNET if self.device.network == "down" else errors.WEBSOCKET_ERROR
            error = ChatError(code)
            error.resolver = isinstance(failure, socket.gaierror)   # the name did not resolve
            raise error from None
        if self._closed:                      # reset while the handshake was running
            self._ws.transport.abort()
            raise ChatError(errors.NO_INTERNET)
        self.state = "open"
        self.port = self._ws.transport.get_extra_info("sockname")[1]
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @property
    def ending(self) -> bool:
        """Both close frames have crossed; what is left is the end of the TCP stream."""
        protocol = self._ws.protocol if self._ws is not None else None
        return (not self._closed and self.reader is not None and protocol is not None
                and protocol.close_sent is not None and protocol.close_rcvd is not None)

    def request(self, op: str, **fields: Any) -> asyncio.Future:
        """Sends `{"id", "op", ...fields}`; the future gets the reply's `result`, or a
        ChatError for an `error` reply or a socket that ended first."""
        future = asyncio.get_running_loop().create_future()
        if self._ws is None or self._closed:
            future.set_exception(ChatError(errors.WEBSOCKET_ERROR))
            return future
        request_id = next(self._ids)
        self._waiting[request_id] = future
        frame = {"id": request_id, "op": op}
        frame.update({k: v for k, v in fields.items() if v is not None})
        self.device.track(self._send(json.dumps(frame)))
        return future

    def fail(self, reply: asyncio.Future, error: Exception) -> None:
        """Fails a request with `error` and drops it (calls.reply-deadline): a late reply is
        then ignored like one to no request, and the socket's end fails nothing."""
        self._waiting = {request_id: future for request_id, future in self._waiting.items()
                         if future is not reply}
        if not reply.done():
            reply.set_exception(error)

    def close(self, code: int, deadline=None, end_after_handshake: bool = True) -> None:
        """A closing handshake with `code`; the socket stays listed until it is done.
        `deadline` is the SDK's close deadline timer (cancelled when the socket ends);
        without `end_after_handshake` the server's FIN is waited for."""
        self.end_after_handshake = end_after_handshake
        if self._ws is None or self._closed:
            if deadline is not None:
                deadline.cancel()
            return
        self._close_deadline = deadline
        asyncio.get_running_loop().create_task(self._ws.close(code))

    def abort(self) -> None:
        """Resets the TCP connection, as a lost network or a killed process would."""
        if self._ws is not None:
            self._ws.transport.abort()
        elif self._handshake is not None:
            self._handshake.cancel()          # an upgrade still unanswered
        self._finish()

    async def _send(self, text: str) -> None:
        try:
            await self._ws.send(text)
            self.sent += 1
        except Exception:
            pass                              # the reader reports the end of the socket

    async def _read(self) -> None:
        try:
            async for message in self._ws:
                self.received += 1
                if self.device.network == "weak" or isinstance(message, bytes):
                    continue                  # a weak network loses what the server sends
                try:
                    frame = json.loads(message)
                except ValueError:
                    continue                  # a frame that is not JSON is ignored, like an unknown event
                if isinstance(frame, dict):
                    self._dispatch(frame)
        except Exception:
            pass
        self._finish()

    def _dispatch(self, frame: dict) -> None:
        if "event" in frame:
            self.on_event(self, frame)
            return
        future = self._waiting.pop(frame.get("id"), None)
        if future is None or future.done():
            return
        if "error" in frame:
            err = frame["error"]
            code = err.get("errorCode", errors.WEBSOCKET_ERROR)
            future.set_exception(ChatError(code, errors.DESCRIPTIONS.get(code, err.get("errorDescription"))))
        else:
            future.set_result(frame.get("result", {}))

    def _finish(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.state = "closed"
        if self._close_deadline is not None:
            self._close_deadline.cancel()
        received = self._ws.protocol.close_rcvd if self._ws is not None else None
        self.close_code = received.code if received is not None else None
        if self in self.device.sockets:
            self.device.sockets.remove(self)
        for future in self._waiting.values():
            if not future.done():
                code = errors.NO_INTERNET if self.device.network == "down" else errors.WEBSOCKET_ERROR
                future.set_exception(ChatError(code))
        self._waiting.clear()
        # Deferred, so that callbacks of replies that arrived before the close run first.
        asyncio.get_running_loop().call_soon(self.on_closed, self)
