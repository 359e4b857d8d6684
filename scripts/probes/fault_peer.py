"""What the fault table (scripts/probes/fault-table.py) observes with: a `mockchat serve
--clock virtual` whose clock the probe moves, and a client socket whose every byte the
probe sees.

The client speaks WebSocket through websockets' own protocol object (the library every
script here uses, in its sans-I/O form) over a plain socket, so that what ends the
connection is seen as it is on the wire: a reset (ECONNRESET), an end of stream (FIN),
a close frame and its code, or nothing. Times are on the server's virtual clock: a row
advances it step by step and looks at what arrived after each step.
"""
import json
import os
import select
import socket
import sys
import time

from websockets.client import ClientProtocol
from websockets.frames import Close, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from chat_wire import login as login_frame, request  # noqa: E402
from mockchat_server import Server  # noqa: E402

# How long (real time) a step waits for bytes that should not come: the server has
# written everything a step causes before it answers the control request that made the
# step, so on loopback a short wait is enough to see what did come.
QUIET = 0.15
# How long a step waits for bytes that should come.
WAIT = 5.0
# How long a clock step waits for the server to read what the clients sent.
SETTLE = 1.0


class Clocked:
    """A server on the virtual clock, with times counted from a mark in milliseconds."""

    def __init__(self, binary):
        self.binary = binary
        self.server = Server(binary, "--clock", "virtual")
        self.port = self.server.port
        self.base = 0
        self.offset = 0
        self.peers = []

    def call(self, method, path, body=None):
        """The JSON reply of a control request that must succeed."""
        status, text = self.server.control(method, path, body)
        if status != 200:
            raise RuntimeError(f"{method} {path} {json.dumps(body)}: {status} {text}")
        return json.loads(text) if text.strip() else None

    def fault(self, **body):
        return self.call("POST", "/control/faults", body)

    def mark(self):
        """Times from now on are counted from here."""
        self.base = round(self.call("GET", "/control/clock")["now"] * 1000)
        self.offset = 0

    def settle(self):
        """Waits (up to SETTLE s) until the server has read every text frame the peers
        sent, as `POST /control/settle` counts them (docs/PROTOCOL.md, 12.6a), so that the
        clock never moves past a frame still in the socket. A session whose frames a
        fault keeps (silent, still crossing a latency, held) is not waited for."""
        deadline = time.monotonic() + SETTLE
        while time.monotonic() < deadline:
            sockets = {entry["port"]: entry for entry in self.call("POST", "/control/settle")["sockets"]}
            behind = [peer for peer in self.peers if peer.ended is None and peer.sent
                      and (entry := sockets.get(peer.port)) is not None
                      and not (entry.get("silent") or entry.get("receiving") or entry.get("held"))
                      and entry.get("received", 0) < peer.sent]
            if not behind:
                return
            time.sleep(0.01)

    def at(self, offset_ms):
        """Advances the clock to `offset_ms` after the mark (never backwards), once the
        server has read what the peers sent."""
        self.settle()
        if offset_ms > self.offset:
            self.call("POST", "/control/clock/advance", {"ms": offset_ms - self.offset})
            self.offset = offset_ms

    def another(self):
        """A second fresh server of the same binary."""
        return Clocked(self.binary)

    def stop(self):
        self.server.stop()


class Peer:
    """One client connection: sends the upgrade at once, and records the HTTP response,
    the text frames (JSON decoded), the close frame's code and how the stream ended."""

    def __init__(self, clock, name="client"):
        self.name = name
        self.sock = socket.create_connection(("127.0.0.1", clock.port), timeout=WAIT)
        self.port = self.sock.getsockname()[1]
        self.sent = 0
        clock.peers.append(self)
        self.protocol = ClientProtocol(parse_uri(f"ws://127.0.0.1:{clock.port}/v1/ws"))
        self.protocol.send_request(self.protocol.connect())
        self.response = None
        self.frames = []
        self.close_code = None
        self.ended = None  # "reset" or "end" once the stream has ended
        self.next_id = 1
        self.flush()

    def flush(self):
        for data in self.protocol.data_to_send():
            if data and self.ended is None:  # b"" would half-close: this client never does
                try:
                    self.sock.sendall(data)
                except OSError:
                    self.ended = self.ended or "reset"

    def pump(self, until=lambda: False, wait=QUIET):
        """Reads what arrives until `until()` holds or `wait` seconds pass with nothing
        that makes it hold; returns whether it holds."""
        deadline = time.monotonic() + wait
        while not until() and self.ended is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                break
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                self.ended = "reset"
                break
            self._feed(chunk)
        return until()

    def _feed(self, chunk):
        if chunk:
            self.protocol.receive_data(chunk)
        else:
            self.ended = "end"
            self.protocol.receive_eof()
        for event in self.protocol.events_received():
            if isinstance(event, Response):
                self.response = event
            elif event.opcode is Opcode.TEXT:
                text = event.data.decode()
                try:
                    self.frames.append(json.loads(text))
                except ValueError:
                    self.frames.append(text)
            elif event.opcode is Opcode.CLOSE:
                self.close_code = Close.parse(event.data).code if event.data else 1005
        self.flush()  # the answer to a close frame

    def send(self, op, **fields):
        """Sends a request; returns its id."""
        request_id = self.next_id
        self.next_id += 1
        self.send_text(request(request_id, op, **fields))
        return request_id

    def send_text(self, text):
        self.sent += 1
        self.protocol.send_text(text.encode())
        self.flush()

    def login(self, uid, device, platform="desktop", presence="all"):
        """Sends a login; returns its id."""
        request_id = self.next_id
        self.next_id += 1
        self.send_text(login_frame(request_id, uid, device, platform=platform, presence=presence))
        return request_id

    def close(self, code=1000):
        self.protocol.send_close(code)
        self.flush()

    def has_reply(self, request_id):
        return self.reply(request_id) is not None

    def reply(self, request_id):
        return next((f for f in self.frames if isinstance(f, dict) and f.get("id") == request_id), None)

    def events(self, name, uid=None):
        return [f for f in self.frames if isinstance(f, dict) and f.get("event") == name
                and (uid is None or (f.get("user") or {}).get("uid") == uid)]

    def upgraded(self):
        return self.response is not None and self.response.status_code == 101

    def ending(self):
        """How the connection has ended so far, as the table writes it."""
        close = f"close {self.close_code}" if self.close_code is not None else "no close frame"
        if self.ended is None:
            return "open" if self.close_code is None else f"{close}, stream open"
        return f"{'reset' if self.ended == 'reset' else 'end of stream'}, {close}"

    def shut(self):
        self.sock.close()


def labels(frames):
    """Frames as short labels: `reply 3`, `error 3 ERR_X`, `user.online bob`, `device.kicked`."""
    out = []
    for frame in frames:
        if not isinstance(frame, dict):
            out.append("text")
        elif "event" in frame:
            uid = (frame.get("user") or {}).get("uid")
            out.append(f"{frame['event']} {uid}" if uid else frame["event"])
        elif "error" in frame:
            out.append(f"error {frame.get('id')} {frame['error'].get('errorCode')}")
        else:
            out.append(f"reply {frame.get('id')}")
    return ", ".join(out) or "nothing"


def since_login(peer):
    """What a logged-in peer has received since its login's reply, and how it stands."""
    return f"{labels(peer.frames[1:])}, {peer.ending()}"


ROWS = []


def row(name, body):
    """Registers a row: `name` (for --only and --expect), the fault body as the table
    shows it, and a function of a fresh server returning (measured, expected), and
    optionally a figure shown with the measurement but not compared (seeded times)."""
    def register(function):
        ROWS.append((name, body, function))
        return function
    return register


def logged_in(clock, uid, device, presence="all", platform="desktop"):
    """A new connection of `uid` on `device`, logged in (its reply is frame 1)."""
    peer = Peer(clock, uid)
    peer.pump(peer.upgraded, WAIT)
    request_id = peer.login(uid, device, platform=platform, presence=presence)
    peer.pump(lambda: peer.has_reply(request_id), WAIT)
    reply = peer.reply(request_id)
    if not reply or "result" not in reply:
        raise RuntimeError(f"login of {uid}/{device} failed: {reply}")
    peer.connection = reply["result"].get("connectionId")
    return peer


def first(clock, peer, check, offsets):
    """The first of `offsets` (ms after the mark) at which check() holds, the clock
    advanced to each in turn; `+N ms`, or `not by +LAST ms`."""
    for offset in offsets:
        clock.at(offset)
        if peer.pump(check, WAIT if offset == offsets[-1] else QUIET):
            return f"+{offset} ms"
    return f"not by +{offsets[-1]} ms"


def upgrade_text(peer):
    """An upgrade's answer as the table writes it: `101`, `reset`, or the status line,
    the headers that matter, the body and how the stream ended."""
    if peer.response is None:
        return "no answer" if peer.ended is None else f"no HTTP response, {peer.ended}"
    response = peer.response
    if response.status_code == 101:
        return "101"
    parts = [f"HTTP {response.status_code} {response.reason_phrase}"]
    for header in ("Retry-After", "Content-Type"):
        if header in response.headers:
            parts.append(f"{header}: {response.headers[header]}")
    parts.append(f"body {response.body.decode()!r}")
    peer.pump(lambda: peer.ended is not None, WAIT)
    parts.append("then " + ("end of stream" if peer.ended == "end" else str(peer.ended or "open")))
    return ", ".join(parts)


def attempts(clock, count):
    """`count` upgrades one after the other: what each got (`101`, `503`, `reset`)."""
    seen = []
    for _ in range(count):
        peer = Peer(clock)
        peer.pump(lambda: peer.response is not None or peer.ended is not None, WAIT)
        seen.append(str(peer.response.status_code) if peer.response else str(peer.ended))
        peer.shut()
    return seen
