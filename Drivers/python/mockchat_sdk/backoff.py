"""The reconnection schedule (003_679c9ad3fd31654b.txt, "Reconnection intervals"): the
waits before each attempt after a loss, then a fixed period. Pure."""

from __future__ import annotations

from typing import Sequence


class Backoff:
    def __init__(self, steps: Sequence[float], repeat: float, first_index: int = 0):
        self._steps = tuple(steps)
        self._repeat = repeat
        self._first = first_index
        self._index = first_index

    def next_delay(self) -> float:
        """The wait before the next attempt; each call moves one step on."""
        delay = self._steps[self._index] if self._index < len(self._steps) else self._repeat
        self._index += 1
        return delay

    def reset(self) -> None:
        """Back to the first step (on foreground, on a network change, once connected)."""
        self._index = self._first
