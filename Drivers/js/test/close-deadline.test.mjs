/** transport.close-deadline: a close frame the server leaves unanswered ends the
 * connection at closeTimeout on the SDK's clock, not at the WebSocket library's own
 * wall-clock wait. A scripted platform stands for the WebSocket. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatClient } from '../sdk/client.mjs';
import { VirtualClock } from '../sdk/clock.mjs';
import { Device } from '../sdk/transport.mjs';
import { PROFILES } from '../sdk/profiles.mjs';
import { setBug } from '../sdk/bugs.mjs';

/** A WebSocket that opens, answers the login, and records closes and aborts. */
function scriptedPlatform(log) {
  return {
    create: () => {
      const ws = {};
      queueMicrotask(() => ws.onopen());
      return ws;
    },
    send: (ws, text, done) => {
      const frame = JSON.parse(text);
      done();
      if (frame.op === 'login') queueMicrotask(() => ws.onmessage({ data: JSON.stringify({ id: frame.id, result: { user: { uid: frame.uid } } }) }));
    },
    close: (ws, code) => log.push(`close ${code}`),      // the server never answers it
    abort: (ws) => { log.push('abort'); ws.onclose({ code: 1006, reason: '' }); },
    port: () => 40000,
    ending: () => false,
  };
}

async function disconnectedClient(log) {
  const clock = new VirtualClock(1_700_000_000_000);
  const client = new ChatClient({
    device: new Device(scriptedPlatform(log)), clock, url: 'ws://127.0.0.1:1/v1/ws', authKey: 'k', profile: PROFILES['cometchat-ios'],
  });
  await client.init({});
  await client.login({ uid: 'alice' });
  await client.disconnect();
  return clock;
}

test('an unanswered close ends at the close deadline on the SDK clock', async () => {
  const log = [];
  const clock = await disconnectedClient(log);
  assert.deepEqual(log, ['close 1000']);
  clock.advanceTo(clock.now() + PROFILES['cometchat-ios'].closeTimeout - 1);
  assert.deepEqual(log, ['close 1000']);
  clock.advanceTo(clock.now() + 1);
  assert.deepEqual(log, ['close 1000', 'abort']);
  assert.equal(clock.nextDeadline(), null, 'nothing left armed');
});

test('with waits-for-server-close the close has no deadline', async () => {
  setBug('waits-for-server-close');
  try {
    const log = [];
    const clock = await disconnectedClient(log);
    clock.advanceTo(clock.now() + 60_000);
    assert.deepEqual(log, ['close 1000']);
  } finally {
    setBug(null);
  }
});
