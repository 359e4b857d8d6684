"""The transport against a scripted server on a local socket: what `Device.settle` waits for."""

import asyncio
import base64
import hashlib
import struct

from mockchat_sdk.transport import Device, V1Socket

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class ClosingServer:
    """Accepts one WebSocket, sends a close frame with `code`, reads the client's close
    frame, and ends the TCP stream only when `release` is set: a server whose end of
    the stream is still on its way."""

    def __init__(self, code: int):
        self.code = code
        self.client_closed = asyncio.Event()
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
        writer.write(bytes([0x88, 2]) + struct.pack("!H", self.code))
        header = await reader.readexactly(2)
        await reader.readexactly(4 + (header[1] & 0x7F))   # mask and payload
        self.client_opcode = header[0] & 0x0F
        self.client_closed.set()
        await self.release.wait()
        writer.close()


def test_settle_waits_for_the_end_of_a_socket_whose_closing_handshake_is_done():
    async def run():
        server = ClosingServer(4001)
        url = await server.start()
        device, ended = Device(), []
        sock = V1Socket(device, url, on_event=lambda *_: None, on_closed=ended.append)
        await sock.open()
        await asyncio.wait_for(server.client_closed.wait(), timeout=5)
        assert server.client_opcode == 0x8, "the client answered with a close frame"
        settling = asyncio.get_running_loop().create_task(device.settle())
        for _ in range(50):                    # loop turns, not time
            await asyncio.sleep(0)
        assert not settling.done(), "settled while the server had not ended the stream"
        assert device.sockets == [sock] and sock.state == "open"
        server.release.set()
        await settling
        assert device.sockets == [] and ended == [sock] and sock.close_code == 4001
        server.server.close()
    asyncio.run(run())
