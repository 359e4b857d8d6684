"""Device events (docs/DRIVER.md, "Device events"): what the device around the SDK does on
its own. `read` checks a command's args as the reference driver does and gives the value
an adapter acts on."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Union

from .adapter import DriverError

DEVICE = ["dns", "sleep", "throttle", "networkChange"]

_KEYS = {"dns": ("fail", "error"), "sleep": ("ms",), "throttle": ("periodMs",), "networkChange": ()}
# The resolver errors a `dns` event can give; the first is the default.
DNS_ERRORS = ("notFound", "temporary")
_RANGES = {"dns": (0, 1_000_000), "sleep": (1, 86_400_000), "throttle": (0, 3_600_000)}


class DnsFailures(NamedTuple):
    """What a `dns` event asks of the resolver."""
    attempts: Optional[int]  # lookups left to fail (0 clears); None: every one until cleared
    error: str               # one of DNS_ERRORS


def read(command: str, args: Any) -> Union[None, int, DnsFailures]:
    """`dns`: the DnsFailures; `sleep`: ms; `throttle`: period in ms (0 ends it);
    `networkChange`: None."""
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
    value: Optional[Any] = args.get(key)
    if command == "dns":
        error = DNS_ERRORS[0] if args.get("error") is None else args["error"]
        if error not in DNS_ERRORS:
            raise DriverError("bad-arguments", f"dns needs 'error': one of {', '.join(DNS_ERRORS)}")
        if isinstance(value, bool):
            return DnsFailures(None if value else 0, error)
        return DnsFailures(_integer(command, key, value), error)
    return _integer(command, key, value)


def _integer(command: str, key: str, value: Any) -> int:
    low, high = _RANGES[command]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DriverError("bad-arguments", f"{command} needs {key!r}: an integer from {low} to {high}")
    return value
