import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../sdk/clock.mjs';
import { DeviceClock } from '../sdk/device-clock.mjs';
import { readDeviceEvent } from '../driver/device-events.mjs';

const T0 = 1700000000000;
const rig = () => { const base = new VirtualClock(T0); return { base, clock: new DeviceClock(base), seen: [] }; };

test('sleep holds overdue timers and fires them at the wake in deadline order', () => {
  const { base, clock, seen } = rig();
  clock.schedule(T0 + 20000, () => seen.push(['keepalive', base.now() - T0]));
  base.advanceTo(T0 + 12000);
  clock.sleep(25000);
  clock.schedule(T0 + 15000, () => seen.push(['pong', base.now() - T0]));
  clock.schedule(T0 + 52000, () => seen.push(['later', base.now() - T0]));
  assert.equal(base.nextDeadline(), T0 + 37000);
  base.advanceTo(T0 + 60000);
  assert.deepEqual(seen, [['pong', 37000], ['keepalive', 37000], ['later', 52000]]);
});

test('uptime timers keep their remaining time across a sleep', () => {
  const { base, clock, seen } = rig();
  clock.schedule(T0 + 20000, () => seen.push(base.now() - T0), { countsSleep: false });
  base.advanceTo(T0 + 12000);
  clock.sleep(25000);
  base.advanceTo(T0 + 60000);
  assert.deepEqual(seen, [45000]);
});

test('throttling coalesces timers to the period until it ends', () => {
  const { base, clock, seen } = rig();
  clock.setThrottle(60000);
  clock.schedule(T0 + 10000, () => seen.push(base.now() - T0));
  const late = clock.schedule(T0 + 61000, () => seen.push(base.now() - T0));
  base.advanceTo(T0 + 100000);
  assert.deepEqual(seen, [60000]);
  clock.setThrottle(0);
  base.advanceTo(T0 + 100000);
  assert.deepEqual(seen, [60000, 100000]);
  clock.cancel(late);
});

test('device events refuse bad args by name', () => {
  const bad = (message) => new Error(message);
  assert.deepEqual(readDeviceEvent('dns', { fail: 3 }, bad), { attempts: 3, error: 'notFound' });
  assert.deepEqual(readDeviceEvent('dns', { fail: true }, bad), { attempts: null, error: 'notFound' });
  assert.deepEqual(readDeviceEvent('dns', { fail: false }, bad), { attempts: 0, error: 'notFound' });
  assert.deepEqual(readDeviceEvent('dns', { fail: 2, error: 'temporary' }, bad), { attempts: 2, error: 'temporary' });
  assert.equal(readDeviceEvent('sleep', { ms: 5 }, bad), 5);
  assert.throws(() => readDeviceEvent('dns', { fail: 2, error: 'EAI_AGAIN' }, bad), /dns needs 'error': one of notFound, temporary/);
  assert.throws(() => readDeviceEvent('dns', { fail: 2, host: 'x' }, bad), /dns takes no 'host', only 'fail' and 'error'/);
  assert.throws(() => readDeviceEvent('sleep', { ms: 0 }, bad), /sleep needs 'ms': an integer from 1 to 86400000/);
  assert.throws(() => readDeviceEvent('throttle', { periodMs: 5, x: 1 }, bad), /throttle takes no 'x', only 'periodMs'/);
  assert.throws(() => readDeviceEvent('networkChange', { to: 'lte' }, bad), /networkChange takes no 'to'$/);
  assert.throws(() => readDeviceEvent('dns', [], bad), /dns needs an object of args/);
});
