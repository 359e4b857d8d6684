"""Device events (docs/DRIVER.md, "Device events"): what the device around the SDK does on
its own. `read` checks a command's args as the reference driver does and gives the value
an adapter acts on."""

from __future__ import annotations

from typing import Any, Optional, Union

from .adapter import DriverError

DEVICE = ["dns", "sleep", "throttle", "networkChange"]

_KEYS = {"dns": ("fail", "error"), "sleep": ("ms",), "throttle": ("periodMs",), "networkChange": ()}
# The resolver errors a `dns` event can give; the first is the default.
DNS_ERRORS = ("notFound", "temporary")
_RANGES = {"dns": (0, 1_000_000), "sleep": (1, 86_400_000), "throttle": (0, 3_600_000)}


def read(command: str, args: Any) -> Union[None, int, bool]:
    """`dns`: attempts to fail (an int, 0 clears) or True (until cleared); `sleep`: ms;
    `throttle`: period in ms (0 ends it); `networkChange`: None."""
    if not isinstance(args, dict):
        raise DriverError("bad-arguments", f"{command} needs an object of args")
    keys = _KEYS[command]
    for stray in args:
        if stray not in keys:
            only = " and ".join(repr(key) for key in keys)
            raise DriverError("bad-arguments", f"{command} takes no {stray!r}" + (f", only {only}" if keys else ""))
    if not keys:
        return None
    key = keys[0]
    if command == "dns":
        dns_error(args)
    value: Optional[Any] = args.get(key)
    if command == "dns" and isinstance(value, bool):
        return True if value else 0
    low, high = _RANGES[command]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DriverError("bad-arguments", f"{command} needs {key!r}: an integer from {low} to {high}")
    return value


def dns_error(args: dict) -> str:
    """A `dns` event's resolver error: `notFound` (the default) or `temporary`."""
    error = args.get("error")
    if error is None:
        return DNS_ERRORS[0]
    if error not in DNS_ERRORS:
        raise DriverError("bad-arguments", f"dns needs 'error': one of {', '.join(DNS_ERRORS)}")
    return error
