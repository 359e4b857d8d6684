"""The transport against a scripted server on a local socket: what `Device.settle` waits for."""

import asyncio
import base64
import gc
import hashlib
import struct
from typing import Optional

from mockchat_sdk import errors
from mockchat_sdk.client import ChatClient
from mockchat_sdk.clock import VirtualClock
from mockchat_sdk.profile import PROFILES
from mockchat_sdk.transport import Device, V1Socket

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class ClosingServer:
    """Accepts one WebSocket and, with a `code`, sends a close frame with it; reads the
    client's first frame (its close frame, or a request it never answers), then notes when the client ends the TCP stream, and ends its own
    side only when `release` is set: a server whose end of the stream lingers (or, without
    a code, one that never answers a close)."""

    def __init__(self, code: Optional[int]):
        self.code = code
        self.client_closed = asyncio.Event()
        self.client_ended = asyncio.Event()
        self.release = asyncio.Event()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"ws://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1/ws"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                   if line.lower().startswith(b"sec-websocket-key:"))
        accept = base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID).digest())
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
        if self.code is not None:
            writer.write(bytes([0x88, 2]) + struct.pack("!H", self.code))
        header = await reader.readexactly(2)
        await reader.readexactly(4 + (header[1] & 0x7F))   # mask and payload
        self.client_opcode = header[0] & 0x0F
        self.client_closed.set()
        try:
            if await reader.read() == b"":
                self.client_ended.set()
        except ConnectionError:
            self.client_ended.set()            # a reset ends it too
        await self.release.wait()
        writer.close()


def test_a_complete_closing_handshake_ends_the_socket_without_waiting_for_the_servers_fin():
    """transport.close-does-not-wait: once both close frames crossed, here of a close the
    server began, the SDK ends the TCP connection itself, and a settle does not wait for a
    server that lingers."""
    async def run():
        server = ClosingServer(4001)
        url = await server.start()
        device, ended = Device(), []
        sock = V1Socket(device, url, on_event=lambda *_: None, on_closed=ended.append)
        await sock.open()
        await asyncio.wait_for(server.client_closed.wait(), timeout=5)
        assert server.client_opcode == 0x8, "the client answered with a close frame"
        await asyncio.wait_for(server.client_ended.wait(), timeout=5)
        await device.settle()
        assert not server.release.is_set(), "the server has not ended its side"
        assert device.sockets == [] and ended == [sock] and sock.close_code == 4001
        server.release.set()
        server.server.close()
    asyncio.run(run())


def test_a_close_the_server_never_answers_ends_at_the_deadline_on_the_sdks_clock():
    """transport.close-deadline: the wait for the answer runs on the injected clock, not
    on the WebSocket library's wall-clock timeout."""
    async def run():
        server = ClosingServer(None)
        url = await server.start()
        clock, device, ended = VirtualClock(), Device(), []
        sock = V1Socket(device, url, on_event=lambda *_: None, on_closed=ended.append)
        await sock.open()
        sock.close(1000, deadline=clock.call_later(5, sock.abort))
        await asyncio.wait_for(server.client_closed.wait(), timeout=5)
        await device.settle()
        clock.advance_to(clock.now_ms() + 4_999)
        await device.settle()
        assert device.sockets == [sock] and not server.client_ended.is_set()
        clock.advance_to(clock.now_ms() + 1)
        await asyncio.wait_for(server.client_ended.wait(), timeout=5)
        await device.settle()
        assert device.sockets == [] and ended == [sock] and clock.next_deadline() is None
        server.release.set()
        server.server.close()
    asyncio.run(run())


def test_a_call_past_its_deadline_is_forgotten_by_the_socket():
    """calls.reply-deadline: once the call failed at callTimeout, its request leaves the
    socket's waiting table, and nothing is left failed that no one reads (asyncio would
    log "Future exception was never retrieved")."""
    async def run():
        unread = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: unread.append(context["message"]))
        server = ClosingServer(None)           # reads the request and never answers
        url = await server.start()
        clock, device = VirtualClock(), Device()
        sock = V1Socket(device, url, on_event=lambda *_: None, on_closed=lambda _: None)
        await sock.open()
        client = ChatClient(device, clock, url, "key", PROFILES["cometchat-ios"])
        call = client._with_deadline(sock, sock.request("users.get", uid="bob"))
        await asyncio.wait_for(server.client_closed.wait(), timeout=5)
        await device.settle()
        clock.advance_to(clock.now_ms() + 10_000)
        await device.settle()
        assert call.exception().code == errors.WEBSOCKET_ERROR
        assert sock._waiting == {}, "the socket still waits for the reply"
        sock.abort()
        await device.settle()
        gc.collect()
        assert unread == []
        server.release.set()
        server.server.close()
    asyncio.run(run())


def test_a_dns_failure_raises_the_resolver_error_of_its_kind():
    """docs/DRIVER.md, `dns`: `notFound` is EAI_NONAME, `temporary` EAI_AGAIN; both run out."""
    import socket
    device = Device()
    device.set_dns_failures(1)
    try:
        device.resolve("ws://chat.example/v1/ws")
        raise AssertionError("the name resolved")
    except socket.gaierror as failure:
        assert failure.errno == socket.EAI_NONAME
    device.resolve("ws://chat.example/v1/ws")   # the one failure is used up
    device.set_dns_failures(2, "temporary")
    for _ in range(2):
        try:
            device.resolve("ws://chat.example/v1/ws")
            raise AssertionError("the name resolved")
        except socket.gaierror as failure:
            assert failure.errno == socket.EAI_AGAIN and "Temporary failure" in str(failure)
    device.resolve("ws://chat.example/v1/ws")
