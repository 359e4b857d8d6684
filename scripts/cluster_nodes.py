"""How the cluster scripts start redis-server and `mockchat serve --cluster` nodes
(docs/CLUSTER.md), shared by scripts/cluster-test.py and scripts/bench-cluster."""

import re
import shutil

BANNER = re.compile(r"MockChat listening on (ws://\S+)")


def redis_command(port, loglevel="warning"):
    """A redis-server on 127.0.0.1:PORT without persistence, logging to stderr."""
    return [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--logfile", "/dev/stderr", "--loglevel", loglevel]


def node_command(mockchat, name, redis_port, fixtures, ttl=None, extra=()):
    """One cluster node on a free port with the in-memory trace off; its banner names the port."""
    command = [mockchat, "serve", "--port", "0", "--fixtures", fixtures, "--cluster", f"redis://127.0.0.1:{redis_port}",
               "--node", name, "--trace-capacity", "0"]
    if ttl is not None:
        command += ["--node-ttl", str(ttl)]
    return command + list(extra)


def redis_ready(port):
    """True when redis-server answers PING on 127.0.0.1:PORT."""
    import socket
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def redis_info(port, field):
    """One numeric field of redis-server's INFO, or None."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO memory\r\n")
        data = b""
        while b"\r\n\r\n" not in data[-8:] and len(data) < 65536:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if re.search(rb"\r\n" + field.encode() + rb":\d+\r\n", data):
                break
    match = re.search(field.encode() + rb":(\d+)", data)
    return int(match.group(1)) if match else None
