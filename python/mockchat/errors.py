"""Typed errors of the MockChat Python package."""

from __future__ import annotations


class MockChatError(Exception):
    """Base class of every error this package raises."""


class ControlError(MockChatError):
    """The control API refused a request: `status` is the HTTP status, `message` the
    server's `{"error": TEXT}` (docs/PROTOCOL.md, section 12)."""

    def __init__(self, method: str, path: str, status: int, message: str):
        super().__init__(f"{method} {path}: HTTP {status}: {message}")
        self.method, self.path, self.status, self.message = method, path, status, message


class BadRequest(ControlError):
    """400: the body is not JSON, or a field is missing or out of range."""


class Unauthorized(ControlError):
    """401: the server wants `Authorization: Bearer TOKEN` (`--control-token`)."""


class Forbidden(ControlError):
    """403: not a loopback client, or a Host or Origin the control API does not accept."""


class NotFound(ControlError):
    """404: an unknown route, or a known path with the wrong method."""


class Unreachable(MockChatError):
    """No answer from the control API (the server is not running, or not on that port)."""


class ServerStartError(MockChatError):
    """`mockchat serve` exited, or did not become healthy, before it could be used."""


def control_error(method: str, path: str, status: int, message: str) -> ControlError:
    """The typed error for an HTTP status."""
    kind = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound}.get(status, ControlError)
    return kind(method, path, status, message)
