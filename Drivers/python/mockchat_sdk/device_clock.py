"""The device's timers (docs/DRIVER.md, "Device events"). Over the run's clock (virtual
or system) it adds what the phone or browser does to an app's timers: while the device
sleeps no timer fires, and on wake the overdue ones fire at once in deadline order; while
the platform throttles (a hidden tab) a timer fires on the first tick of the period at or
after its deadline.

A timer that does not count sleep (`counts_sleep=False`, a timer on the uptime clock that
stops while the device sleeps) keeps its remaining time instead: its deadline moves by
the length of every sleep it spans. The SDK's own timers count sleep; the seeded bug
`uptime-timers` asks for the other kind."""

from __future__ import annotations

import itertools
from typing import Callable, Optional

from .clock import Clock, Timer


class DeviceTimer(Timer):
    """A timer of the device: where it sits on the run's clock changes with sleep and throttling."""

    def __init__(self, owner: "DeviceClock", deadline_ms: int, callback: Callable[[], None], counts_sleep: bool):
        super().__init__(deadline_ms, callback)
        self.owner, self.counts_sleep, self.order = owner, counts_sleep, next(owner._order)
        self.placed: Optional[Timer] = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.placed is not None:
            self.placed.cancel()
        self.owner._timers.discard(self)


class DeviceClock(Clock):
    def __init__(self, base: Clock):
        self.base = base
        self.wake_ms: Optional[int] = None                  # the end of the sleep under way
        self.throttle: Optional[tuple[int, int]] = None     # (first tick, period) in ms
        self._timers: set[DeviceTimer] = set()
        self._order = itertools.count()
        self._wake_timer: Optional[Timer] = None

    def now_ms(self) -> int:
        return self.base.now_ms()

    def call_later(self, seconds: float, callback: Callable[[], None], counts_sleep: bool = True) -> Timer:
        start = self.now_ms() if counts_sleep or self.wake_ms is None else self.wake_ms
        timer = DeviceTimer(self, start + round(seconds * 1000), callback, counts_sleep)
        self._timers.add(timer)
        self._place()
        return timer

    def sleep(self, ms: int) -> None:
        """The device sleeps `ms` from now; a sleep under way is extended, never shortened."""
        now = self.now_ms()
        wake = max(self.wake_ms or now + ms, now + ms)
        for timer in self._timers:
            if not timer.counts_sleep:       # the uptime clock stops for the added stretch
                timer.deadline_ms += wake - max(now, self.wake_ms or now)
        self.wake_ms = wake
        if self._wake_timer is not None:
            self._wake_timer.cancel()
        # Armed before the timers it releases, so it runs first at the wake.
        self._wake_timer = self.base.call_later((wake - now) / 1000, self._woke)
        self._place()

    def set_throttle(self, period_ms: int) -> None:
        """Timers fire only on ticks `period_ms` apart from now on; 0 ends the throttling."""
        self.throttle = (self.now_ms(), period_ms) if period_ms > 0 else None
        self._place()

    def fire_time(self, deadline_ms: int) -> int:
        time = deadline_ms
        if self.wake_ms is not None and time < self.wake_ms:
            time = self.wake_ms
        if self.throttle is not None and time > self.throttle[0]:
            origin, period = self.throttle
            time = origin + -(-(time - origin) // period) * period
        return time

    def _woke(self) -> None:
        self.wake_ms, self._wake_timer = None, None

    def _place(self) -> None:
        """Puts every live timer on the run's clock in deadline order, so that timers
        moved to one instant fire in deadline order."""
        now = self.now_ms()
        for timer in sorted(self._timers, key=lambda t: (t.deadline_ms, t.order)):
            if timer.placed is not None:
                timer.placed.cancel()
            timer.placed = self.base.call_later(max(self.fire_time(timer.deadline_ms) - now, 0) / 1000,
                                                lambda t=timer: self._fire(t))

    def _fire(self, timer: DeviceTimer) -> None:
        if timer.cancelled:
            return
        timer.cancel()
        timer.callback()
