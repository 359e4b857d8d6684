/** The SDK reads time and arms timers only through a clock, so that a test can move time.
 * Times are integer milliseconds of Unix time. */

/** Real time on the platform's timers. */
export class SystemClock {
  now() { return Date.now(); }
  schedule(at, fire) { return { handle: setTimeout(fire, Math.max(0, at - Date.now())) }; }
  cancel(timer) { if (timer) clearTimeout(timer.handle); }
  nextDeadline() { return null; }
}

/** Time that moves only when told to; timers fire in deadline order (ties: in the order armed). */
export class VirtualClock {
  constructor(now) {
    this.current = now;
    this.timers = [];
    this.armed = 0;
  }
  now() { return this.current; }
  schedule(at, fire) {
    const timer = { at, fire, order: this.armed++ };
    this.timers.push(timer);
    return timer;
  }
  cancel(timer) {
    const index = this.timers.indexOf(timer);
    if (index >= 0) this.timers.splice(index, 1);
  }
  nextDeadline() { return this.earliest()?.at ?? null; }
  /** Moves to `to`; with `fire`, every timer due by then fires first, each at its own time. */
  advanceTo(to, fire = true) {
    for (let timer = this.earliest(); fire && timer && timer.at <= to; timer = this.earliest()) {
      this.cancel(timer);
      this.current = Math.max(this.current, timer.at);
      timer.fire();
    }
    this.current = Math.max(this.current, to);
  }
  earliest() {
    let best = null;
    for (const t of this.timers) if (!best || t.at < best.at || (t.at === best.at && t.order < best.order)) best = t;
    return best;
  }
}
