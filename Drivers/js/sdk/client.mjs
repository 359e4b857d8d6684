/** The SDK's public API. Every call goes into the ConnectionMachine; the client carries
 * out the actions it returns on the clock and the device. */

import { ChatError } from './errors.mjs';
import { ConnectionMachine } from './connection.mjs';
import { bug } from './bugs.mjs';

/** A users request (004 "Get Online Users"): built once, then paged with fetchNext(). */
export class UsersRequest {
  constructor(client, limit, status) {
    this.client = client;
    this.limit = limit;
    this.status = status ?? null;
    this.cursor = null;
    this.done = false;
  }
  fetchNext() { return this.client.call('fetchNext', { request: this }); }
}

/** Presence subscriptions as the wire protocol names them (004 "Presence Subscription"). */
export function presenceSubscription(presence) {
  if (presence === 'all' || presence === 'friends' || presence === 'none') return { mode: presence };
  if (presence && Array.isArray(presence.roles)) return { mode: 'roles', roles: presence.roles };
  throw new Error(`presence must be 'all', 'friends', 'none' or {roles: [...]}, not ${JSON.stringify(presence)}`);
}

export class ChatClient {
  /** `options`: {device, clock, url, authKey, profile, hooks}. `hooks` (optional) sees
   * what the SDK does: socketOpening(), connection(name, listenerIds, extra). */
  constructor({ device, clock, url, authKey, profile, hooks = {} }) {
    this.device = device;
    this.clock = clock;
    this.url = url;
    this.authKey = authKey;
    this.profile = profile;
    this.hooks = hooks;
    this.machine = new ConnectionMachine(profile, device.storage.load());
    this.calls = new Map();
    this.callIds = 0;
    this.timers = new Map();
    this.sockets = new Map();
    this.userListeners = new Map();
    this.connectionListeners = new Map();
    this.shut = false;
    this.lastFrame = 0;          // when the server last sent something
  }

  init({ autoEstablishSocketConnection, presence = 'all', region = 'us', reconnectKickEnable = false,
    deviceId = 'default', platform = 'mobile' } = {}) {
    const settings = {
      auto: autoEstablishSocketConnection ?? this.profile.defaultAutoMode,
      presence: presenceSubscription(presence), region, reconnectKickEnable, deviceId, platform,
    };
    return this.call('init', { settings });
  }
  login({ uid, authKey, token } = {}) {
    return this.call('login', { credentials: { uid: uid ?? null, authKey: authKey ?? this.authKey, token: token ?? null } });
  }
  logout() { return this.call('logout'); }
  connect() { return this.call('connect'); }
  disconnect() { return this.call('disconnect'); }
  ping() { return this.call('ping'); }
  getUser(uid) { return this.call('getUser', { uid }); }
  usersRequest({ limit = 30, status = null } = {}) { return new UsersRequest(this, limit, status); }
  configureServices(state) { return this.call('configureServices', { state }); }

  getLoggedInUser() { return this.machine.saved?.user ?? null; }
  getConnectionStatus() { return this.machine.status; }
  backgroundTaskEnabled() { return this.machine.taskFlag; }

  addUserListener(id, listener) { this.userListeners.set(id, listener); }
  removeUserListener(id) { if (!bug('listener-not-removed')) this.userListeners.delete(id); }
  addConnectionListener(id, listener) { this.connectionListeners.set(id, listener); }
  removeConnectionListener(id) { this.connectionListeners.delete(id); }

  /** The app's lifecycle, from its delegate (or the page's visibility in a browser). */
  willResignActive() { this.feed({ type: 'willResignActive' }); }
  didBackground() { this.feed({ type: 'didBackground' }); }
  foreground() { this.feed({ type: 'foreground' }); }
  /** The device's network changed: `up`, `down` or `weak`. */
  networkChanged(condition) { this.feed({ type: 'network', condition }); }
  /** The OS reports a network path change (an interface change); the network stays up. */
  networkPathChanged() { this.feed({ type: 'networkPath' }); }

  /** The instance is dropped: timers cancelled, nothing reported any more. */
  shutdown() {
    this.shut = true;
    for (const timer of this.timers.values()) this.clock.cancel(timer);
    this.timers.clear();
  }

  call(type, fields = {}) {
    const call = ++this.callIds;
    const promise = new Promise((resolve, reject) => this.calls.set(call, { resolve, reject }));
    this.feed({ type, call, ...fields });
    return promise;
  }

  feed(input) {
    if (this.shut) return;
    const actions = this.machine.handle({ ...input, now: this.clock.now() });
    for (const action of actions) this.perform(action);
  }

  perform(action) {
    switch (action.type) {
      case 'open': return this.open(action.socket);
      case 'send': return this.sockets.get(action.socket)?.send(action.frame);
      case 'close': return this.close(action.socket, action.code);
      case 'abort': return this.sockets.get(action.socket)?.abort();
      case 'arm': {
        this.clock.cancel(this.timers.get(action.name));
        this.timers.set(action.name, this.clock.schedule(action.at, () => {
          this.timers.delete(action.name);
          if (action.name === 'keepalive' && this.idleTooLong()) return this.feed({ type: 'timer', name: 'pong' });
          this.feed({ type: 'timer', name: action.name });
        }, { countsSleep: !bug('uptime-timers') }));   // the uptime clock stops in sleep (sdk/device-clock.mjs)
        return;
      }
      case 'cancel':
        this.clock.cancel(this.timers.get(action.name));
        this.timers.delete(action.name);
        return;
      case 'emit': return this.emit(action);
      case 'presence': return this.presence(action.change, action.user);
      case 'resolve': return this.settle(action.call, (c) => c.resolve(action.value));
      case 'reject': return this.settle(action.call, (c) => c.reject(new ChatError(action.code, action.description)));
      case 'save': return this.device.storage.save(action.saved);
      default: throw new Error(`unknown action ${action.type}`);
    }
  }

  /** The seeded `wall-clock-idle-check`: a silence from the server longer than a ping and
   * its deadline is read as a dead connection, however late the timer ran. */
  idleTooLong() {
    const limit = this.profile.keepAliveInterval + this.profile.pongTimeout;
    return bug('wall-clock-idle-check') && this.machine.phase === 'ready' && this.clock.now() - this.lastFrame > limit;
  }

  /** A closing handshake with the close deadline (transport.close-deadline): a close the
   * server leaves unanswered ends at closeTimeout on the SDK's clock, like its other
   * timers, not at the WebSocket library's own wait on the wall clock. */
  close(id, code) {
    const socket = this.sockets.get(id);
    if (!socket) return;
    socket.close(code);
    if (bug('waits-for-server-close')) return;
    const deadline = this.clock.schedule(this.clock.now() + this.profile.closeTimeout, () => socket.abort());
    socket.onFinish = () => this.clock.cancel(deadline);
  }

  open(id) {
    this.hooks.socketOpening?.();
    const socket = this.device.open(this.url, {
      opened: () => this.feed({ type: 'opened', socket: id }),
      message: (frame) => {
        this.lastFrame = this.clock.now();
        if ('event' in frame) return this.feed({ type: 'event', socket: id, frame });
        if (frame.id === undefined || frame.id === null) return;
        const error = frame.error ? { code: frame.error.errorCode, description: frame.error.errorDescription } : undefined;
        this.feed({ type: 'reply', socket: id, id: frame.id, result: frame.result ?? {}, error });
      },
      closed: (code, reason) => {
        this.sockets.delete(id);
        this.feed({ type: 'closed', socket: id, code, reason });
      },
    });
    this.sockets.set(id, socket);
  }

  emit({ name, error, reason }) {
    const ids = [...this.connectionListeners.keys()];
    this.hooks.connection?.(name, ids, { error, reason });
    for (const listener of this.connectionListeners.values()) listener(name, { error, reason });
  }

  presence(change, user) {
    for (const listener of this.userListeners.values()) {
      (change === 'online' ? listener.onUserOnline : listener.onUserOffline)?.(user);
    }
  }

  settle(call, fn) {
    const pending = this.calls.get(call);
    if (!pending) return;
    this.calls.delete(call);
    fn(pending);
  }
}
