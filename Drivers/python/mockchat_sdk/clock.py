"""The SDK's only source of time. Under test a VirtualClock is injected and moved by
the test; otherwise SystemClock runs timers on the asyncio loop in real time."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Callable, Optional


class Timer:
    """A handle to one scheduled callback."""

    def __init__(self, deadline_ms: int, callback: Callable[[], None]):
        self.deadline_ms = deadline_ms
        self.callback = callback
        self.cancelled = False
        self._handle: Optional[asyncio.TimerHandle] = None

    def cancel(self) -> None:
        self.cancelled = True
        if self._handle is not None:
            self._handle.cancel()


class Clock:
    """Interface: `now_ms()` and `call_later(seconds, callback) -> Timer`."""

    def now_ms(self) -> int:
        raise NotImplementedError

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Timer:
        raise NotImplementedError

    def now(self) -> float:
        """Unix seconds."""
        return self.now_ms() / 1000.0


class SystemClock(Clock):
    """Real time; timers run on the running asyncio loop."""

    def now_ms(self) -> int:
        return int(time.time() * 1000)

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(self.now_ms() + round(seconds * 1000), callback)
        timer._handle = asyncio.get_running_loop().call_later(max(seconds, 0), self._fire, timer)
        return timer

    @staticmethod
    def _fire(timer: Timer) -> None:
        if not timer.cancelled:
            timer.cancelled = True
            timer.callback()


class VirtualClock(Clock):
    """Time that moves only when `advance_to` is called. Timers fire in deadline order;
    timers with the same deadline fire in the order they were scheduled."""

    def __init__(self, now_ms: int = 1_700_000_000_000):
        self._now = now_ms
        self._heap: list[tuple[int, int, Timer]] = []
        self._seq = itertools.count()

    def now_ms(self) -> int:
        return self._now

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(self._now + round(seconds * 1000), callback)
        heapq.heappush(self._heap, (timer.deadline_ms, next(self._seq), timer))
        return timer

    def next_deadline(self) -> Optional[int]:
        """The earliest armed timer's deadline, or None."""
        while self._heap and self._heap[0][2].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def advance_to(self, to_ms: int, fire: bool = True) -> int:
        """Moves the clock to `to_ms`. With `fire`, runs every timer due by then (also
        timers those callbacks schedule), each at its own deadline. Returns how many
        ran. Without `fire`, only the time moves."""
        fired = 0
        if fire:
            while True:
                deadline = self.next_deadline()
                if deadline is None or deadline > to_ms:
                    break
                _, _, timer = heapq.heappop(self._heap)
                self._now = max(self._now, deadline)
                timer.cancelled = True
                timer.callback()
                fired += 1
        self._now = max(self._now, to_ms)
        return fired
