"""MockChat for Python tests.

- `ControlClient`: the control API (clock, fixtures, faults, pushes, trace, settle, reset).
- `MockChatServer`: `mockchat serve` as a child process on a free port.
- the pytest plugin (`mockchat.pytest_plugin`): the `mockchat_server` fixture.
- `mockchat.driver`: the driver kit, driver protocol v1 around an SDK adapter."""

from .control import ControlClient
from .errors import (BadRequest, ControlError, Forbidden, MockChatError, NotFound, ServerStartError, Unauthorized,
                     Unreachable)
from .server import MockChatServer, find_binary

__version__ = "0.1.0"
__all__ = ["ControlClient", "MockChatServer", "find_binary", "MockChatError", "ControlError", "BadRequest",
           "Unauthorized", "Forbidden", "NotFound", "Unreachable", "ServerStartError"]
