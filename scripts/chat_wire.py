"""What the scripts share to speak MockChat's protocol from Python (docs/PROTOCOL.md), so
each keeps only its own checks: a WebSocket opened with the same options under every
websockets version, request and login frames, the close code of a closed socket, free
ports, and the control API through the `mockchat` package's ControlClient (python/)."""

import asyncio
import inspect
import json
import os
import socket
import sys

try:
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # websockets older than 13
    from websockets import connect as ws_connect
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from mockchat.control import ControlClient  # noqa: E402,F401 (the one control client)
from mockchat.errors import ControlError  # noqa: E402,F401

# The app's auth key in the built-in fixtures (Fixtures/app.json).
AUTH_KEY = "mockchat-dev-key"


class CheckFailed(Exception):
    """A check of a script did not hold; the message says which and what was seen."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def open_socket(url, timeout, **options):
    """A WebSocket to `url` within `timeout` seconds: no keep-alive pings, no compression
    and no proxy (where this websockets version has those options), so every frame on
    the wire is one the script sent."""
    settings = {"ping_interval": None, "open_timeout": timeout, "close_timeout": timeout}
    parameters = inspect.signature(ws_connect).parameters
    if "compression" in parameters:
        settings["compression"] = None
    if "proxy" in parameters:
        settings["proxy"] = None
    settings.update(options)
    return await asyncio.wait_for(ws_connect(url, **settings), timeout)


def request(request_id, op, **fields):
    """A request frame as text: `{"id": ..., "op": ..., fields...}`."""
    return json.dumps({"id": request_id, "op": op, **fields})


def login(request_id, uid, device, platform="desktop", presence="all", auth_key=AUTH_KEY, **fields):
    """A login frame as text; `presence` is a mode (`all`, `friends`, `none`), a whole
    subscription object, or None to leave it out."""
    if presence is not None:
        fields["presence"] = {"mode": presence} if isinstance(presence, str) else presence
    return request(request_id, "login", uid=uid, authKey=auth_key, deviceId=device, platform=platform, **fields)


def close_code(closed):
    """The code of the close frame the server sent, from a ConnectionClosed."""
    rcvd = getattr(closed, "rcvd", None)
    if rcvd is not None:
        return rcvd.code
    return getattr(closed, "code", None)


class Connection:
    """One WebSocket connection read frame by frame, every receive with a deadline; a
    frame that is not what a check waits for is a CheckFailed naming both."""

    def __init__(self, name, ws, timeout):
        self.name = name
        self.ws = ws
        self.timeout = timeout
        self.next_id = 1

    @classmethod
    async def open(cls, name, url, timeout):
        try:
            ws = await open_socket(url, timeout)
        except (OSError, asyncio.TimeoutError) as error:
            raise CheckFailed(f"{name}: cannot connect to {url}: {error!r}")
        except Exception as error:  # handshake refused, bad URL...
            raise CheckFailed(f"{name}: WebSocket handshake with {url} failed: {error!r}")
        return cls(name, ws, timeout)

    async def send_raw(self, text):
        await self.ws.send(text)

    async def send(self, op, **fields):
        request_id = self.next_id
        self.next_id += 1
        await self.ws.send(request(request_id, op, **fields))
        return request_id

    async def receive(self, what):
        try:
            text = await asyncio.wait_for(self.ws.recv(), self.timeout)
        except asyncio.TimeoutError:
            raise CheckFailed(f"{self.name}: nothing received within {self.timeout} s while waiting for {what}")
        except ConnectionClosed as closed:
            raise CheckFailed(f"{self.name}: connection closed (code {close_code(closed)}) "
                              f"while waiting for {what}")
        expect(isinstance(text, str), f"{self.name}: expected a text frame for {what}, got binary")
        try:
            message = json.loads(text)
        except ValueError:
            raise CheckFailed(f"{self.name}: frame is not JSON while waiting for {what}: {text[:200]!r}")
        expect(isinstance(message, dict), f"{self.name}: frame is not an object: {text[:200]!r}")
        return message

    async def reply(self, request_id, what):
        """The reply to `request_id`; a pushed event first is a failure."""
        message = await self.receive(what)
        expect("event" not in message, f"{self.name}: expected the reply to {what}, got event {message!r}")
        expect(message.get("id") == request_id,
               f"{self.name}: expected id {request_id!r} for {what}, got {message!r}")
        return message

    async def result(self, request_id, what):
        message = await self.reply(request_id, what)
        expect("result" in message and "error" not in message, f"{self.name}: {what} failed: {message!r}")
        result = message["result"]
        expect(isinstance(result, dict), f"{self.name}: result of {what} is not an object: {message!r}")
        return result

    async def error(self, request_id, code, what):
        message = await self.receive(what)
        expect("event" not in message, f"{self.name}: expected an error for {what}, got event {message!r}")
        expect(message.get("id") == request_id,
               f"{self.name}: expected id {request_id!r} on the error for {what}, got {message!r}")
        error = message.get("error")
        expect(isinstance(error, dict) and "result" not in message,
               f"{self.name}: expected an error reply for {what}, got {message!r}")
        expect(error.get("errorCode") == code,
               f"{self.name}: expected {code} for {what}, got {error.get('errorCode')!r}")
        expect(isinstance(error.get("errorDescription"), str) and error["errorDescription"],
               f"{self.name}: error for {what} lacks an errorDescription: {message!r}")
        return error

    async def closed(self, what):
        """Waits for the server to close; returns the close code it sent."""
        try:
            text = await asyncio.wait_for(self.ws.recv(), self.timeout)
        except asyncio.TimeoutError:
            raise CheckFailed(f"{self.name}: still open {self.timeout} s after {what}")
        except ConnectionClosed as closed:
            return close_code(closed)
        raise CheckFailed(f"{self.name}: expected the connection to close after {what}, got {text[:200]!r}")

    async def close(self):
        await self.ws.close()
