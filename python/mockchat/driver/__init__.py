"""The driver kit: driver protocol v1 (docs/DRIVER.md) with everything but the SDK.

An SDK's driver is an `Adapter` subclass and one line, `run(MyAdapter)`; the kit reads the
harness's messages over stdio or WebSocket, says hello, keeps one scenario at a time,
answers `settle` and `advance` from the adapter's clock, turns call outcomes into results
(at once, or `pending` and a `result` event later), and protocol errors into replies."""

from .adapter import Adapter, Clock, DriverError, Scenario
from .device import DEVICE
from .loop import CALLS, ENVIRONMENT, QUERIES, Driver, Result
from .transports import run, serve_stdio, serve_websocket

__all__ = ["Adapter", "Clock", "DriverError", "Scenario", "Driver", "Result", "CALLS", "ENVIRONMENT", "QUERIES", "DEVICE",
           "run", "serve_stdio", "serve_websocket"]
