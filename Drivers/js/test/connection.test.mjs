import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionMachine } from '../sdk/connection.mjs';
import { PROFILES } from '../sdk/profiles.mjs';

const AUTO = { auto: true, presence: { mode: 'all' }, deviceId: 'd', platform: 'mobile', reconnectKickEnable: false };
const MANUAL = { ...AUTO, auto: false };
const ALICE = { uid: 'alice', authKey: 'k', token: null };

/** A machine driven by inputs at given times; `run` returns the actions of one input. */
function machine(profile = 'cometchat-ios') {
  const m = new ConnectionMachine(PROFILES[profile]);
  const run = (type, fields = {}, now = 0) => m.handle({ type, now, ...fields });
  return { m, run };
}

const types = (actions) => actions.map((a) => a.type === 'emit' ? `emit:${a.name}` : a.type);

/** An auto-mode machine logged in and connected at t = 0 on socket 1. */
function connected(profile) {
  const { m, run } = machine(profile);
  run('init', { call: 1, settings: AUTO });
  run('login', { call: 2, credentials: ALICE });
  const [login] = run('opened', { socket: 1 }).filter((a) => a.type === 'send');
  run('reply', { socket: 1, id: login.frame.id, result: { user: { uid: 'alice', status: 'online' } } });
  return { m, run };
}

test('calls before init fail with ERR_NOT_INITIALIZED and open nothing (D28)', () => {
  const { run } = machine();
  assert.deepEqual(run('login', { call: 1, credentials: ALICE }), [{ type: 'reject', call: 1, code: 'ERR_NOT_INITIALIZED', description: undefined }]);
});

test('an auto-mode login opens a socket, logs in on it and reports connecting then connected', () => {
  const { m, run } = machine();
  run('init', { call: 1, settings: AUTO });
  assert.deepEqual(types(run('login', { call: 2, credentials: ALICE })), ['cancel', 'emit:connecting', 'open', 'arm']);
  const sent = run('opened', { socket: 1 });
  const login = sent.find((a) => a.type === 'send').frame;
  assert.equal(login.op, 'login');
  assert.equal(login.reconnect, false);
  const done = run('reply', { socket: 1, id: login.id, result: { user: { uid: 'alice', status: 'online' } } });
  assert.ok(types(done).includes('emit:connected'));
  assert.deepEqual(done.find((a) => a.type === 'resolve'), { type: 'resolve', call: 2, value: { uid: 'alice', status: 'online' } });
  assert.equal(m.status, 'connected');
  assert.deepEqual(done.find((a) => a.type === 'arm'), { type: 'arm', name: 'keepalive', at: PROFILES['cometchat-ios'].keepAliveInterval });
});

test('a lost connection waits 0.05 s, then 0.25 s after a failed attempt (003, D7)', () => {
  const { m, run } = connected();
  const lost = run('closed', { socket: 1, code: 1006, reason: '' }, 5000);
  assert.deepEqual(types(lost).filter((t) => t.startsWith('emit')), ['emit:disconnected', 'emit:connecting']);
  assert.deepEqual(lost.find((a) => a.type === 'arm'), { type: 'arm', name: 'backoff', at: 5050 });
  assert.ok(types(run('timer', { name: 'backoff' }, 5050)).includes('open'));
  const again = run('closed', { socket: 2, code: 1006, reason: '' }, 5050);
  assert.deepEqual(again.find((a) => a.type === 'arm'), { type: 'arm', name: 'backoff', at: 5300 });
  assert.equal(m.status, 'connecting');
});

test('an upgrade never answered is abandoned at the open deadline and the loop goes on (reconnection.open-deadline)', () => {
  const { m, run } = connected();
  run('closed', { socket: 1, code: 1006, reason: '' }, 5000);
  const attempt = run('timer', { name: 'backoff' }, 5050);
  assert.deepEqual(attempt.find((a) => a.type === 'arm'), { type: 'arm', name: 'open', at: 5050 + PROFILES['cometchat-ios'].openTimeout });
  const abandoned = run('timer', { name: 'open' }, 15050);
  assert.deepEqual(abandoned.find((a) => a.type === 'abort'), { type: 'abort', socket: 2 });
  assert.deepEqual(abandoned.find((a) => a.type === 'arm'), { type: 'arm', name: 'backoff', at: 15300 });
  assert.equal(m.status, 'connecting');
  const next = run('timer', { name: 'backoff' }, 15300);
  assert.ok(types(run('opened', { socket: 3 }, 15300)).includes('cancel'));
  assert.deepEqual(run('timer', { name: 'open' }, 25300), [], 'a deadline of an answered upgrade changes nothing');
  assert.ok(types(next).includes('open'));
});

test('without a network the loop pauses, and resumes 0.05 s after it returns', () => {
  const { m, run } = connected();
  run('network', { condition: 'down' }, 1000);
  run('closed', { socket: 1, code: 1006, reason: '' }, 1000);
  assert.equal(m.loop, 'paused');
  assert.equal(m.status, 'disconnected');
  const up = run('network', { condition: 'up' }, 9000);
  assert.deepEqual(up.find((a) => a.type === 'arm'), { type: 'arm', name: 'backoff', at: 9050 });
});

test('a kick ends the connection for good: status kicked, no reconnection', () => {
  const { m, run } = connected();
  const kicked = run('event', { socket: 1, frame: { event: 'device.kicked', reason: 'another mobile device logged in' } }, 100);
  assert.deepEqual(kicked.find((a) => a.type === 'emit'), { type: 'emit', name: 'kicked', reason: 'another mobile device logged in' });
  assert.equal(run('foreground', {}, 200).some((a) => a.type === 'open'), false);
  assert.equal(m.status, 'kicked');
});

test('ping() in auto mode fails before anything else is checked (D24)', () => {
  const { run } = machine();
  run('init', { call: 1, settings: AUTO });
  assert.equal(run('ping', { call: 2 })[0].code, 'ERROR_PING_NOT_AVAILABLE');
});

test('in auto mode the background closes the socket at once, with the SDK\'s code (000 "Auto Mode")', () => {
  const { m, run } = connected();
  const actions = run('didBackground', {}, 100);
  assert.deepEqual(actions.find((a) => a.type === 'close'), { type: 'close', socket: 1, code: 1000 });
  assert.equal(m.status, 'disconnected');
});

test('manual mode keeps the socket in the background and sends one ping (D5)', () => {
  const { m, run } = machine();
  run('init', { call: 1, settings: MANUAL });
  run('login', { call: 2, credentials: ALICE });
  assert.equal(m.phase, 'none');
  run('connect', { call: 3 });
  const login = run('opened', { socket: 1 }).find((a) => a.type === 'send').frame;
  run('reply', { socket: 1, id: login.id, result: { user: { uid: 'alice', status: 'online' } } });
  const actions = run('didBackground', {}, 100);
  assert.equal(actions.find((a) => a.type === 'send').frame.op, 'ping');
  assert.equal(actions.some((a) => a.type === 'close'), false);
});

test('a Nexconn login without network waits, disconnected, and is not refused (D12)', () => {
  const { m, run } = machine('nexconn-ios');
  run('init', { call: 1, settings: AUTO });
  run('network', { condition: 'down' });
  assert.equal(run('login', { call: 2, credentials: ALICE }).some((a) => a.type === 'reject'), false);
  assert.equal(m.status, 'disconnected');
  assert.equal(m.loop, 'paused');
});

test('a reply whose user or page cannot be read fails the call with ERR_MALFORMED_REPLY (codes.malformed-reply)', () => {
  const { m, run } = connected();
  const [get] = run('getUser', { call: 3, uid: 'bob' }).filter((a) => a.type === 'send');
  const failed = run('reply', { socket: 1, id: get.frame.id, result: { user: 'not a user' } });
  assert.deepEqual(failed.map((a) => [a.type, a.call, a.code]), [['reject', 3, 'ERR_MALFORMED_REPLY']]);
  const [list] = run('fetchNext', { call: 4, request: { limit: 2 } }).filter((a) => a.type === 'send');
  const page = run('reply', { socket: 1, id: list.frame.id, result: { users: [{ uid: 'bob' }, 7], next: null } });
  assert.deepEqual(page.map((a) => [a.type, a.call, a.code]), [['reject', 4, 'ERR_MALFORMED_REPLY']]);
  assert.equal(m.status, 'connected');
});

test('disconnect() while a logout awaits its answer completes the logout (calls.disconnect-during-logout)', () => {
  const { m, run } = connected();
  run('logout', { call: 3 });
  const done = run('disconnect', { call: 4 });
  assert.deepEqual(done.filter((a) => a.type === 'resolve').map((a) => a.call), [3, 4]);
  assert.ok(!done.some((a) => a.type === 'reject'));
  assert.deepEqual(done.find((a) => a.type === 'save'), { type: 'save', saved: null });
  assert.equal(m.loggedIn, false);
  assert.equal(m.status, 'disconnected');
});

test('a call whose reply never comes fails at callTimeout and the connection stays (calls.reply-deadline, D16)', () => {
  const { m, run } = connected();
  const sent = run('getUser', { call: 3, uid: 'bob' }, 1000);
  assert.deepEqual(sent.find((a) => a.type === 'arm'), { type: 'arm', name: 'call', at: 1000 + PROFILES['cometchat-ios'].callTimeout });
  const [list] = run('fetchNext', { call: 4, request: { limit: 2 } }, 5000).filter((a) => a.type === 'send');
  run('reply', { socket: 1, id: list.frame.id, result: { users: [], next: null } }, 6000);
  const fired = run('timer', { name: 'call' }, 11000);
  assert.deepEqual(fired, [{ type: 'reject', call: 3, code: 'ERR_WEBSOCKET_ERROR', description: 'No reply to the call' }]);
  assert.equal(m.status, 'connected');
  const [again] = run('getUser', { call: 5, uid: 'bob' }, 12000).filter((a) => a.type === 'send');
  const late = run('getUser', { call: 6, uid: 'carol' }, 15000);
  assert.equal(late.some((a) => a.type === 'arm'), false, 'the oldest call holds the timer');
  run('reply', { socket: 1, id: again.frame.id, result: { user: { uid: 'bob' } } }, 13000);
  assert.deepEqual(run('timer', { name: 'call' }, 22000), [{ type: 'arm', name: 'call', at: 25000 }]);
  assert.deepEqual(run('timer', { name: 'call' }, 25000).map((a) => [a.type, a.call]), [['reject', 6]]);
});
