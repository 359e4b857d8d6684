"""The device's timers under sleep and throttling (docs/DRIVER.md, "Device events")."""

from mockchat_sdk.clock import VirtualClock
from mockchat_sdk.device_clock import DeviceClock

T0 = 1_700_000_000_000


def rig():
    base = VirtualClock(T0)
    return base, DeviceClock(base), []


def test_sleep_holds_overdue_timers_and_fires_them_at_the_wake_in_deadline_order():
    base, clock, seen = rig()
    clock.call_later(20, lambda: seen.append(("keepAlive", base.now_ms() - T0)))
    base.advance_to(T0 + 12_000)
    clock.sleep(25_000)
    clock.call_later(3, lambda: seen.append(("reply", base.now_ms() - T0)))   # due at 15 s, armed asleep
    clock.call_later(40, lambda: seen.append(("later", base.now_ms() - T0)))
    assert base.next_deadline() == T0 + 37_000
    base.advance_to(T0 + 60_000)
    assert seen == [("reply", 37_000), ("keepAlive", 37_000), ("later", 52_000)]


def test_uptime_timers_keep_their_remaining_time_across_a_sleep():
    base, clock, seen = rig()
    clock.call_later(20, lambda: seen.append(base.now_ms() - T0), counts_sleep=False)
    base.advance_to(T0 + 12_000)
    clock.sleep(25_000)
    base.advance_to(T0 + 60_000)
    assert seen == [45_000]


def test_throttling_coalesces_to_the_period_until_it_ends():
    base, clock, seen = rig()
    clock.set_throttle(60_000)
    clock.call_later(10, lambda: seen.append(base.now_ms() - T0))
    clock.call_later(61, lambda: seen.append(base.now_ms() - T0))
    base.advance_to(T0 + 100_000)
    assert seen == [60_000]
    clock.set_throttle(0)                  # the tab is visible again: the overdue one fires now
    base.advance_to(T0 + 100_000)
    assert seen == [60_000, 100_000]


def test_a_cancelled_timer_never_fires_even_when_moved():
    base, clock, seen = rig()
    timer = clock.call_later(5, lambda: seen.append("fired"))
    clock.sleep(10_000)
    timer.cancel()
    base.advance_to(T0 + 20_000)
    assert seen == []
