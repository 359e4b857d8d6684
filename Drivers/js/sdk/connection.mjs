/** The connection logic as a pure state machine: `handle(input)` changes the machine's
 * state and returns the actions the client must carry out (open, send, close, abort a
 * socket; arm or cancel a timer; raise an event; answer a call; save the user). It reads
 * no clock and touches no socket: every input carries `now`.
 *
 * The rules come from the vendor documents (000 connection behaviour, 002 background
 * updates, 003 reconnection and device conflict, 004 presence) and, where they are
 * silent, from the project's decisions (docs/CONFORMANCE.md, D1-D33). */

import { ERR } from './errors.mjs';
import { backoffDelay } from './profiles.mjs';
import { bug } from './bugs.mjs';

const TIMERS = ['backoff', 'open', 'reply', 'call', 'keepalive', 'pong', 'task', 'window'];

export class ConnectionMachine {
  /** `savedUser`: what the device kept from an earlier launch ({credentials, user}) or null. */
  constructor(profile, savedUser = null) {
    this.profile = profile;
    this.settings = null;          // set by init(): {auto, presence, deviceId, platform, reconnectKickEnable}
    this.saved = savedUser;        // the logged-in user: {credentials, user}
    this.app = 'foreground';       // foreground | inactive | background
    this.network = 'up';           // up | down | weak
    this.status = 'disconnected';  // connected | connecting | disconnected | kicked
    this.socket = 0;               // the current socket's id, 0 for none
    this.sockets = 0;              // ids handed out
    this.phase = 'none';           // none | opening | login | ready
    this.wanted = false;           // whether the SDK should keep a connection up
    this.loop = 'off';             // off | waiting | paused: the reconnection loop
    this.waits = 0;                // waits of this round so far (the backoff position)
    this.loginCall = null;         // an auto-mode login waiting for the connection
    this.loginCredentials = null;  // its credentials, saved once the server accepts them
    this.connectCalls = [];        // connect() calls waiting for the attempt under way
    this.services = false;         // configureServices() was called (002)
    this.taskRunning = false;      // the 30 s background task (002)
    this.taskFlag = false;         // backgroundTaskEnabled(): whether a task runs now (this SDK's rule, see README)
    this.windowRunning = false;    // the Nexconn background window (003, D8)
    this.requests = new Map();     // request id -> {kind, call, request, deadline}
    this.callDeadline = null;      // when the armed 'call' timer fires (calls.reply-deadline), null when none is
    this.requestIds = 0;
    this.out = [];
  }

  /** One input; returns the actions it causes, in order. */
  handle(input) {
    this.now = input.now;
    this.out = [];
    const method = HANDLERS[input.type];
    if (!method) throw new Error(`unknown input '${input.type}'`);
    method.call(this, input);
    return this.out;
  }

  get loggedIn() { return this.saved !== null; }

  // ---- app calls ---------------------------------------------------------------

  init({ call, settings }) {
    this.settings = settings;
    this.resolve(call, null);
    // 000 "Default SDK behaviour": a reopened app reconnects its saved user on init().
    // In the background it waits: the return to the foreground connects (connection.init-in-background-waits).
    if (settings.auto && this.saved && this.phase === 'none') {
      this.wanted = true;
      if (this.app !== 'background') this.startRound(false);
    }
  }

  login({ call, credentials }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    if (this.saved || this.loginCall !== null) return this.reject(call, ERR.ALREADY_LOGGED_IN);  // D29
    if (!this.settings.auto) {                       // D11: manual mode only keeps the user
      this.save({ credentials, user: { uid: credentials.uid ?? null, status: 'offline' } });  // known to the server only at connect()
      return this.resolve(call, this.saved.user);
    }
    if (this.network === 'down' && !this.profile.retryLoginUntilAnswered) return this.reject(call, ERR.NO_INTERNET);  // D12
    this.loginCall = call;
    this.loginCredentials = credentials;
    this.wanted = true;
    if (this.network === 'down') return this.pause();
    this.startRound(false);
  }

  logout({ call }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    if (!this.saved && this.loginCall === null) return this.reject(call, ERR.NOT_LOGGED_IN);
    if (this.phase === 'ready') return this.send('logout', {}, { kind: 'logout', call });
    this.endSession();
    this.resolve(call, null);
  }

  connect({ call }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    if (!this.saved) return this.reject(call, ERR.NOT_LOGGED_IN);
    if (this.phase === 'ready') return this.reject(call, ERR.ALREADY_CONNECTED);
    if (this.network === 'down') return this.reject(call, ERR.NO_INTERNET);      // D33
    this.connectCalls.push(call);
    if (this.phase !== 'none') return;                 // D26: joins the attempt under way
    this.wanted = true;
    this.startRound(false);
  }

  disconnect({ call }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    const logout = this.takeRequest('logout');
    this.wanted = false;                               // D15: holds until connect() or a login
    this.stopLoop();
    this.failWaiting(ERR.WEBSOCKET);
    this.closeSocket(1000);
    this.setStatus('disconnected');
    if (logout) {                                      // calls.disconnect-during-logout: the socket has gone, so has the user
      this.endSession();
      this.resolve(logout.call, null);
    }
    this.resolve(call, null);
  }

  ping({ call }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    if (this.settings.auto && !bug('ping-in-auto')) return this.reject(call, ERR.PING_NOT_AVAILABLE);  // D24
    this.request(call, 'ping', {}, 'call');
  }

  getUser({ call, uid }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    this.request(call, 'users.get', { uid }, 'user');
  }

  fetchNext({ call, request }) {
    if (!this.settings) return this.reject(call, ERR.NOT_INITIALIZED);
    if (request.done) return this.resolve(call, { users: [], next: null });
    const fields = { limit: request.limit, status: request.status ?? undefined, cursor: request.cursor ?? undefined };
    this.request(call, 'users.list', fields, 'page', request);
  }

  configureServices({ call, state }) {
    this.services = true;
    this.resolve(call, null);
    // D9: called from the did-enter-background handler, it acts at once on an open socket.
    if (state === 'didBackground' && this.app === 'background' && this.profile.backgroundTaskWindow !== null
        && this.phase !== 'none' && !this.taskRunning) this.startTask();
  }

  // ---- the app's lifecycle and the device's network ----------------------------

  willResignActive() { if (this.app === 'foreground') this.app = 'inactive'; }

  didBackground() {
    this.app = 'background';
    if (this.loginCall === null) this.stopLoop();      // D14: nothing reconnects in the background
    if (this.phase === 'none' && this.status === 'connecting' && this.loginCall === null) this.setStatus('disconnected');
    if (this.services && this.profile.backgroundTaskWindow !== null && this.phase !== 'none') return this.startTask();  // 002, D30
    this.taskFlag = false;
    if (this.profile.backgroundDisconnectAfter !== null) {   // 003: kept about two minutes (D8)
      this.windowRunning = true;
      return this.arm('window', this.profile.backgroundDisconnectAfter);
    }
    if (this.settings?.auto) return this.closeSocket(this.profile.backgroundCloseCode, 'disconnected');   // 000 "Auto Mode": closed at once
    if (this.phase === 'ready') {                      // D5: one ping, then the server's 30 s count
      this.send('ping', {}, { kind: 'keepalive' });
      this.stopHeartbeat();
    }
  }

  foreground() {
    this.app = 'foreground';
    this.taskRunning = false;
    this.taskFlag = false;                             // no task runs in the foreground (the manifest waives D10)
    this.windowRunning = false;
    this.cancel('task');
    this.cancel('window');
    if (this.phase === 'ready') return this.keepAlive();   // the server's 30 s count may be running out
    if (!this.settings?.auto || !this.wanted || this.phase !== 'none' || this.loginCall !== null) return;
    // D7: back in the foreground the SDK tries at once, then waits from the first interval.
    this.stopLoop();
    if (!bug('no-foreground-reset')) this.waits = 0;
    if (this.network === 'down') return this.pause();
    this.attempt(true);
  }

  networkChanged({ condition }) {
    const before = this.network;
    this.network = condition;
    if (condition === before) return;
    if (condition === 'down') {
      if (this.loop === 'waiting') this.pause();
      return;                                          // the device resets the sockets themselves
    }
    // 003 "Reconnection intervals": a network change resets the interval.
    if (bug('no-network-reset')) return;
    if (this.loop === 'paused' || this.loop === 'waiting') {
      this.stopLoop();
      this.waits = 0;
      this.scheduleRetry();
    } else if (this.phase === 'opening' || this.phase === 'login') {
      this.waits = 0;                                  // if this attempt fails, the next wait is the first
    }
  }

  /** The OS reports a new network path while the network stays up (an interface change):
   * a live connection is checked at once with a ping, and a waiting loop starts again from
   * the first wait (reconnection.network-change-probes). */
  networkPathChanged() {
    if (bug('ignores-network-change') || this.network === 'down') return;
    this.waits = 0;
    if (this.phase === 'ready' && this.heartbeatActive()) return this.keepAlive();
    if (this.loop === 'waiting') {
      this.stopLoop();
      this.scheduleRetry();
    }
  }

  // ---- sockets -----------------------------------------------------------------

  opened({ socket }) {
    if (socket !== this.socket) return;
    this.phase = 'login';
    this.cancel('open');
    const { credentials } = this.loginCredentials ? { credentials: this.loginCredentials } : this.saved;
    const s = this.settings;
    this.send('login', {
      uid: credentials.uid ?? undefined,
      authKey: credentials.token ? undefined : credentials.authKey,
      token: credentials.token ?? undefined,
      deviceId: s.deviceId, platform: s.platform,
      presence: s.presence, reconnect: this.reconnecting && !bug('reconnect-flag-missing'),
      reconnectKickEnable: s.reconnectKickEnable,
    }, { kind: 'login' });
    if (!bug('no-login-deadline')) this.arm('reply', this.profile.pongTimeout);   // D16: a login reply has the same deadline
  }

  reply({ socket, id, result, error }) {
    if (socket !== this.socket) return;
    const pending = this.requests.get(id);
    if (!pending) return;
    this.requests.delete(id);
    if (pending.kind === 'login') return error ? this.refused(error) : this.loggedInOnServer(result);
    if (pending.kind === 'keepalive') return this.cancel('pong');
    if (pending.kind === 'logout') {
      if (error) return this.reject(pending.call, error.code, error.description);
      this.endSession();
      return this.resolve(pending.call, null);
    }
    if (error) return this.reject(pending.call, error.code, error.description);
    if (pending.kind === 'page') {
      if (!readablePage(result)) return this.reject(pending.call, ERR.MALFORMED_REPLY);
      pending.request.cursor = result.next ?? null;
      pending.request.done = result.next === null || result.next === undefined;
      return this.resolve(pending.call, { users: result.users ?? [], next: result.next ?? null });
    }
    if (pending.kind === 'user') {
      return readableUser(result.user) ? this.resolve(pending.call, result.user) : this.reject(pending.call, ERR.MALFORMED_REPLY);
    }
    this.resolve(pending.call, null);
  }

  event({ socket, frame }) {
    if (socket !== this.socket) return;
    if (frame.event === 'device.kicked' && !bug('reconnect-after-kick')) return this.kicked(frame.reason ?? null);
    if (frame.event === 'user.online' || frame.event === 'user.offline') {
      this.out.push({ type: 'presence', change: frame.event === 'user.online' ? 'online' : 'offline', user: frame.user });
    }                                                  // other events are ignored (project rule)
  }

  closed({ socket, code, reason }) {
    if (socket !== this.socket) return;
    this.socket = 0;
    // D17: the close code tells a kick or a refused login even when the frame was lost.
    if (code === 4001 && !bug('reconnect-after-kick')) return this.kicked(reason || null);
    if ((code === 4003 || code === 4004) && this.phase === 'login') {
      const refusal = code === 4004 ? ERR.RECONNECT_KICK_REFUSED : (reason?.startsWith('ERR_') ? reason : ERR.WEBSOCKET);
      return this.refused({ code: refusal });
    }
    if (bug('dns-failure-ends-loop') && reason?.startsWith('getaddrinfo')) return this.refused({ code: ERR.WEBSOCKET, description: reason });
    if (bug('lost-login-ends-loop') && this.phase === 'login' && this.reconnecting) return this.refused({ code: ERR.WEBSOCKET });
    this.lost();
  }

  timer({ name }) {
    if (name === 'backoff') { this.loop = 'off'; return this.attempt(true); }
    if (name === 'keepalive') return this.keepAlive();
    if (name === 'open' && this.phase !== 'opening') return;
    if (name === 'open' || name === 'reply' || name === 'pong') {   // D16: a heartbeat timeout, an unanswered upgrade
      this.out.push({ type: 'abort', socket: this.socket });
      this.socket = 0;
      return this.lost();
    }
    if (name === 'call') return this.callsTimedOut();
    if (name === 'task' && !bug('no-background-window')) {   // 002: the task ends after 30 s
      this.taskRunning = false;
      this.taskFlag = false;
      return this.endInBackground();
    }
    if (name === 'window') {                           // 003: about two minutes (D8, D32)
      this.windowRunning = false;
      return this.endInBackground();
    }
  }

  // ---- the steps the handlers share --------------------------------------------

  /** A login, connect() or init() starts a round from the first wait (D33). */
  startRound(reconnect) {
    this.stopLoop();
    this.waits = 0;
    this.attempt(reconnect);
  }

  attempt(reconnect) {
    this.socket = ++this.sockets;
    this.phase = 'opening';
    this.reconnecting = reconnect;
    this.setStatus('connecting');
    this.out.push({ type: 'open', socket: this.socket });
    // reconnection.open-deadline: an upgrade nobody answers ends the attempt (003, weak network).
    if (!bug('no-open-deadline')) this.arm('open', this.profile.openTimeout);
  }

  loggedInOnServer(result) {
    this.cancel('reply');
    this.phase = 'ready';
    if (!bug('backoff-not-reset')) this.waits = 0;
    const credentials = this.loginCredentials ?? this.saved.credentials;
    this.save({ credentials, user: result.user ?? { uid: credentials.uid } });
    this.loginCredentials = null;
    this.setStatus('connected');
    if (this.loginCall !== null) { this.resolve(this.loginCall, this.saved.user); this.loginCall = null; }
    for (const call of this.connectCalls.splice(0)) this.resolve(call, null);
    if (this.heartbeatActive()) this.startHeartbeat();
  }

  /** The server refused the login: an `error` event ends the loop (003 tip, D17). */
  refused(error) {
    this.cancel('open');
    this.cancel('reply');
    this.phase = 'none';
    this.socket = 0;
    this.wanted = false;
    this.stopLoop();
    this.emit('error', { error: { code: error.code, description: error.description } });
    if (this.loginCall !== null) { this.reject(this.loginCall, error.code, error.description); this.loginCall = null; }
    this.loginCredentials = null;
    for (const call of this.connectCalls.splice(0)) this.reject(call, error.code, error.description);
    this.setStatus('disconnected');
  }

  kicked(reason) {
    this.stopHeartbeat();
    this.cancel('open');
    this.cancel('reply');
    this.phase = 'none';
    this.socket = 0;
    this.wanted = false;
    this.stopLoop();
    this.failRequests();
    this.failWaiting(ERR.WEBSOCKET);
    this.setStatus('kicked', { reason });
  }

  /** The current socket failed (reset, ended, heartbeat timeout, refused handshake). */
  lost() {
    const wasReady = this.phase === 'ready';
    this.phase = 'none';
    this.stopHeartbeat();
    this.cancel('open');
    this.cancel('reply');
    this.failRequests();
    const code = this.network === 'down' ? ERR.NO_INTERNET : ERR.WEBSOCKET;
    if (!wasReady && this.connectCalls.length > 0) {   // D13: a failed connect() is not retried
      for (const call of this.connectCalls.splice(0)) this.reject(call, code);
      this.wanted = false;
      return this.setStatus('disconnected');
    }
    if (!wasReady && this.loginCall !== null && !this.profile.retryLoginUntilAnswered) {  // D12
      this.reject(this.loginCall, code);
      this.loginCall = null;
      this.loginCredentials = null;
      this.wanted = false;
      return this.setStatus('disconnected');
    }
    if (wasReady) this.setStatus('disconnected');
    if (this.app === 'background' && this.loginCall === null) {
      if (!this.settings.auto) this.wanted = false;    // 000 "Reconnection": manual mode needs connect()
      return this.setStatus('disconnected');
    }
    if (!this.wanted) return this.setStatus('disconnected');
    this.scheduleRetry();
  }

  scheduleRetry() {
    if (this.network === 'down' && !bug('no-network-pause')) return this.pause();
    this.loop = 'waiting';
    this.arm('backoff', backoffDelay(this.profile, bug('backoff-shift') ? this.waits + 1 : this.waits));
    this.waits += 1;
    this.setStatus('connecting');
  }

  /** 003: without a network the loop pauses, and goes on when the network returns. */
  pause() {
    this.cancel('backoff');
    this.loop = 'paused';
    this.setStatus('disconnected');
  }

  stopLoop() {
    this.cancel('backoff');
    this.loop = 'off';
  }

  startTask() {
    this.taskRunning = true;
    this.taskFlag = true;
    this.arm('task', this.profile.backgroundTaskWindow);
    if (this.phase === 'ready') this.startHeartbeat();   // the task keeps the heartbeat going
  }

  /** A background window ended: the socket is closed and nothing waits any longer. */
  endInBackground() {
    if (this.socket === 0 && this.loginCall === null && this.loop === 'off') return;
    this.stopLoop();
    this.failWaiting(ERR.WEBSOCKET);
    if (this.settings && !this.settings.auto) this.wanted = false;
    this.closeSocket(this.profile.backgroundCloseCode);
    this.setStatus('disconnected');
  }

  heartbeatActive() { return this.app !== 'background' || this.taskRunning || this.windowRunning; }

  startHeartbeat() {
    this.cancel('pong');
    this.arm('keepalive', this.profile.keepAliveInterval);
  }

  /** One heartbeat: a ping whose reply must come within the pong timeout (D16). */
  keepAlive() {
    if (this.phase !== 'ready') return;
    this.send('ping', {}, { kind: 'keepalive' });
    if (!bug('no-pong-deadline')) this.arm('pong', this.profile.pongTimeout);
    this.arm('keepalive', this.profile.keepAliveInterval);
  }

  stopHeartbeat() {
    this.cancel('keepalive');
    this.cancel('pong');
  }

  /** Closes the current socket with a closing handshake. */
  closeSocket(code, status) {
    if (this.socket !== 0) this.out.push({ type: 'close', socket: this.socket, code });
    this.socket = 0;
    this.phase = 'none';
    this.stopHeartbeat();
    this.cancel('open');
    this.cancel('reply');
    this.failRequests();
    if (status) this.setStatus(status);
  }

  /** Logout: the user is forgotten on the device and every wait ends. */
  endSession() {
    if (!bug('user-kept-after-logout')) this.save(null);
    else this.saved = null;
    this.wanted = false;
    this.stopLoop();
    this.failWaiting(ERR.WEBSOCKET);
    if (this.socket !== 0 && this.phase !== 'ready') this.out.push({ type: 'abort', socket: this.socket });
    this.socket = 0;
    this.phase = 'none';
    this.stopHeartbeat();
    this.cancel('open');
    this.cancel('reply');
    this.failRequests();
    this.setStatus('disconnected');
  }

  /** A call that goes over the socket: it needs a user and a connection (D23). */
  request(call, op, fields, kind, request) {
    if (!this.saved) return this.reject(call, ERR.NOT_LOGGED_IN);
    if (this.phase !== 'ready') return this.reject(call, this.network === 'down' ? ERR.NO_INTERNET : ERR.WEBSOCKET);
    const deadline = bug('no-call-deadline') ? undefined : this.now + this.profile.callTimeout;
    this.send(op, fields, { kind, call, request, deadline });
    if (deadline !== undefined && this.callDeadline === null) this.armCallDeadline(deadline);
  }

  /** calls.reply-deadline (D16): the calls whose reply is due by now fail with
   * ERR_WEBSOCKET_ERROR; the connection is left to the keep-alive. One timer runs for the
   * oldest call (an answered one's deadline is dropped when the timer fires). */
  callsTimedOut() {
    this.callDeadline = null;
    let next = null;
    for (const [id, pending] of this.requests) {
      if (pending.deadline === undefined) continue;
      if (pending.deadline > this.now) { next = next === null ? pending.deadline : Math.min(next, pending.deadline); continue; }
      this.requests.delete(id);
      this.reject(pending.call, ERR.WEBSOCKET, 'No reply to the call');
    }
    if (next !== null) this.armCallDeadline(next);
  }

  armCallDeadline(at) {
    this.callDeadline = at;
    this.out.push({ type: 'arm', name: 'call', at });
  }

  send(op, fields, pending) {
    const id = ++this.requestIds;
    this.requests.set(id, pending);
    this.out.push({ type: 'send', socket: this.socket, frame: { id, op, ...fields } });
  }

  failRequests() {
    const code = this.network === 'down' ? ERR.NO_INTERNET : ERR.WEBSOCKET;
    for (const pending of this.requests.values()) if (pending.call !== undefined) this.reject(pending.call, code);
    this.requests.clear();
    if (this.callDeadline !== null) { this.callDeadline = null; this.cancel('call'); }
  }

  /** Takes the pending request of this kind out of the table (null when there is none). */
  takeRequest(kind) {
    for (const [id, pending] of this.requests) {
      if (pending.kind === kind) { this.requests.delete(id); return pending; }
    }
    return null;
  }

  failWaiting(code) {
    if (this.loginCall !== null) { this.reject(this.loginCall, code); this.loginCall = null; this.loginCredentials = null; }
    for (const call of this.connectCalls.splice(0)) this.reject(call, code);
  }

  save(saved) {
    this.saved = saved;
    this.out.push({ type: 'save', saved });
  }

  setStatus(status, extra) {
    if (status === this.status && status !== 'kicked') return;
    this.status = status;
    this.emit(status, extra);
  }

  emit(name, extra = {}) { this.out.push({ type: 'emit', name, ...extra }); }
  resolve(call, value) { this.out.push({ type: 'resolve', call, value }); }
  reject(call, code, description) { this.out.push({ type: 'reject', call, code, description }); }
  arm(name, delay) { this.out.push({ type: 'arm', name, at: this.now + delay }); }
  cancel(name) { this.out.push({ type: 'cancel', name }); }
}

/** A user the app can be given: an object with a uid (codes.malformed-reply). */
function readableUser(user) {
  return user !== null && typeof user === 'object' && !Array.isArray(user) && typeof user.uid === 'string';
}

/** A users.list result: a list of readable users and a cursor that is a string or absent. */
function readablePage(result) {
  const next = result.next ?? null;
  return (result.users === undefined || (Array.isArray(result.users) && result.users.every(readableUser)))
    && (next === null || typeof next === 'string');
}

const HANDLERS = {
  init: ConnectionMachine.prototype.init,
  login: ConnectionMachine.prototype.login,
  logout: ConnectionMachine.prototype.logout,
  connect: ConnectionMachine.prototype.connect,
  disconnect: ConnectionMachine.prototype.disconnect,
  ping: ConnectionMachine.prototype.ping,
  getUser: ConnectionMachine.prototype.getUser,
  fetchNext: ConnectionMachine.prototype.fetchNext,
  configureServices: ConnectionMachine.prototype.configureServices,
  willResignActive: ConnectionMachine.prototype.willResignActive,
  didBackground: ConnectionMachine.prototype.didBackground,
  foreground: ConnectionMachine.prototype.foreground,
  network: ConnectionMachine.prototype.networkChanged,
  networkPath: ConnectionMachine.prototype.networkPathChanged,
  opened: ConnectionMachine.prototype.opened,
  reply: ConnectionMachine.prototype.reply,
  event: ConnectionMachine.prototype.event,
  closed: ConnectionMachine.prototype.closed,
  timer: ConnectionMachine.prototype.timer,
};

export const TIMER_NAMES = TIMERS;
