/** The device's timers (docs/DRIVER.md, "Device events"), over the run's clock: while the
 * device sleeps no timer fires, and on wake the overdue ones fire at once in deadline
 * order; while the browser throttles (a hidden tab) a timer fires on the first tick of the
 * period at or after its deadline.
 *
 * A timer armed with `{countsSleep: false}` runs on an uptime clock that stops while the
 * device sleeps: its deadline moves by the length of every sleep it spans. The SDK's own
 * timers count sleep; the seeded bug `uptime-timers` asks for the other kind. */
export class DeviceClock {
  constructor(base) {
    this.base = base;
    this.wake = null;            // the end of the sleep under way
    this.throttle = null;        // {origin, period} in ms
    this.timers = new Set();
    this.armed = 0;
    this.wakeTimer = null;
  }
  now() { return this.base.now(); }
  nextDeadline() { return this.base.nextDeadline(); }

  schedule(at, fire, { countsSleep = true } = {}) {
    const deadline = !countsSleep && this.wake !== null ? this.wake + (at - this.now()) : at;
    const timer = { deadline, fire, countsSleep, order: this.armed++, placed: null };
    this.timers.add(timer);
    this.place();
    return timer;
  }
  cancel(timer) {
    if (!timer) return;
    this.base.cancel(timer.placed);
    this.timers.delete(timer);
  }

  /** The device sleeps `ms` from now; a sleep under way is extended, never shortened. */
  sleep(ms) {
    const now = this.now();
    const wake = Math.max(this.wake ?? now + ms, now + ms);
    for (const timer of this.timers) if (!timer.countsSleep) timer.deadline += wake - Math.max(now, this.wake ?? now);
    this.wake = wake;
    this.base.cancel(this.wakeTimer);
    // Armed before the timers it releases, so it runs first at the wake.
    this.wakeTimer = this.base.schedule(wake, () => { this.wake = null; this.wakeTimer = null; });
    this.place();
  }

  /** Timers fire only on ticks `period` ms apart from now on; 0 ends the throttling. */
  setThrottle(period) {
    this.throttle = period > 0 ? { origin: this.now(), period } : null;
    this.place();
  }

  fireTime(deadline) {
    let time = deadline;
    if (this.wake !== null && time < this.wake) time = this.wake;
    if (this.throttle && time > this.throttle.origin) {
      const { origin, period } = this.throttle;
      time = origin + Math.ceil((time - origin) / period) * period;
    }
    return time;
  }

  /** Puts every live timer on the run's clock in deadline order, so that timers moved to
   * one instant fire in deadline order. */
  place() {
    const ordered = [...this.timers].sort((a, b) => a.deadline - b.deadline || a.order - b.order);
    for (const timer of ordered) {
      this.base.cancel(timer.placed);
      timer.placed = this.base.schedule(this.fireTime(timer.deadline), () => {
        this.timers.delete(timer);
        timer.fire();
      });
    }
  }
}
