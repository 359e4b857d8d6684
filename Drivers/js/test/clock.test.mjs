import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../sdk/clock.mjs';
import { PROFILES, backoffDelay, withValues } from '../sdk/profiles.mjs';

test('a virtual clock fires due timers in deadline order, ties in the order armed', () => {
  const clock = new VirtualClock(1000);
  const fired = [];
  clock.schedule(1500, () => fired.push(['b', clock.now()]));
  clock.schedule(1200, () => fired.push(['a', clock.now()]));
  clock.schedule(1500, () => fired.push(['c', clock.now()]));
  clock.schedule(2000, () => fired.push(['late', clock.now()]));
  assert.equal(clock.nextDeadline(), 1200);
  clock.advanceTo(1500);
  assert.deepEqual(fired, [['a', 1200], ['b', 1500], ['c', 1500]]);
  assert.equal(clock.nextDeadline(), 2000);
});

test('advance without firing moves the clock and leaves timers armed', () => {
  const clock = new VirtualClock(0);
  let fired = false;
  clock.schedule(10, () => { fired = true; });
  clock.advanceTo(10, false);
  assert.equal(clock.now(), 10);
  assert.equal(fired, false);
  assert.equal(clock.nextDeadline(), 10);
});

test('a cancelled timer never fires', () => {
  const clock = new VirtualClock(0);
  let fired = false;
  clock.cancel(clock.schedule(5, () => { fired = true; }));
  clock.advanceTo(100);
  assert.equal(fired, false);
});

test('the backoff follows 003: 0.05 s ... 32 s, then every 64 s', () => {
  const p = PROFILES['nexconn-ios'];
  const waits = Array.from({ length: 11 }, (_, i) => backoffDelay(p, i));
  assert.deepEqual(waits, [50, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 64000]);
});

test('an app value replaces the profile default', () => {
  const p = withValues(PROFILES['cometchat-ios'], { keepAliveInterval: 25000 });
  assert.equal(p.keepAliveInterval, 25000);
  assert.equal(p.pongTimeout, PROFILES['cometchat-ios'].pongTimeout);
});
