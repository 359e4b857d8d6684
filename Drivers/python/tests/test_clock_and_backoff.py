from mockchat_sdk.backoff import Backoff
from mockchat_sdk.clock import VirtualClock
from mockchat_sdk.profile import BACKOFF_REPEAT, BACKOFF_STEPS


def test_backoff_follows_the_documented_table_then_repeats():
    backoff = Backoff(BACKOFF_STEPS, BACKOFF_REPEAT)
    delays = [backoff.next_delay() for _ in range(11)]
    assert delays == [0.05, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 64]


def test_backoff_reset_starts_over():
    backoff = Backoff(BACKOFF_STEPS, BACKOFF_REPEAT)
    backoff.next_delay(), backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() == 0.05


def test_virtual_clock_fires_in_deadline_order_at_each_deadline():
    clock = VirtualClock(1000)
    seen = []
    clock.call_later(2, lambda: seen.append(("b", clock.now_ms())))
    clock.call_later(1, lambda: seen.append(("a", clock.now_ms())))
    clock.call_later(2, lambda: seen.append(("c", clock.now_ms())))
    assert clock.next_deadline() == 2000
    clock.advance_to(2500)
    assert seen == [("a", 2000)] and clock.now_ms() == 2500
    clock.advance_to(3000)
    assert seen == [("a", 2000), ("b", 3000), ("c", 3000)]


def test_virtual_clock_without_fire_only_moves_time():
    clock = VirtualClock(0)
    seen = []
    clock.call_later(1, lambda: seen.append(clock.now_ms()))
    clock.advance_to(1000, fire=False)
    assert seen == [] and clock.next_deadline() == 1000
    clock.advance_to(1000)
    assert seen == [1000]


def test_cancelled_timer_never_fires():
    clock = VirtualClock(0)
    seen = []
    clock.call_later(1, lambda: seen.append(1)).cancel()
    clock.advance_to(5000)
    assert seen == [] and clock.next_deadline() is None
