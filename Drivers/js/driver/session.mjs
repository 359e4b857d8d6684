/** Driver protocol v1 (docs/DRIVER.md) for this SDK, independent of the platform: the
 * Node driver (stdio) and the browser page (WebSocket) both feed it messages and write
 * what it answers. A platform gives `{name, websocket, turn(), sockets}`: the WebSocket
 * adapter of sdk/transport.mjs, a function that lets pending I/O run (one trip through
 * the event loop), and whether settle replies can list sockets (ports known). */

import { ChatClient } from '../sdk/client.mjs';
import { PROFILES } from '../sdk/profiles.mjs';
import { SystemClock, VirtualClock } from '../sdk/clock.mjs';
import { Device } from '../sdk/transport.mjs';
import { ChatError } from '../sdk/errors.mjs';
import { MANIFEST } from '../sdk/manifest.mjs';
import { DeviceClock } from '../sdk/device-clock.mjs';
import { DEVICE_EVENTS, performDeviceEvent, readDeviceEvent } from './device-events.mjs';

const CALLS = ['init', 'login', 'logout', 'connect', 'disconnect', 'ping', 'getLoggedInUser',
  'getConnectionStatus', 'backgroundTaskEnabled', 'getUser', 'fetchNext', 'addUserListener',
  'removeUserListener', 'addConnectionListener', 'removeConnectionListener', 'configureServices'];
const ENVIRONMENT = ['create', 'willResignActive', 'didBackground', 'foreground', 'network', 'relaunch'];

/** The handshake this driver sends first, with the SDK's manifest. */
export function hello(platform) {
  return {
    type: 'hello', protocol: 1, sdk: { ...MANIFEST.sdk, platform: platform.name }, profiles: Object.keys(PROFILES),
    virtualTime: true, commands: ['create', ...CALLS, ...ENVIRONMENT.slice(1), ...DEVICE_EVENTS, 'inspect'],
    events: ['connection', 'connectionListener', 'presence', 'socketOpening', 'result'], sockets: platform.sockets,
    manifest: MANIFEST,
  };
}

class DriverError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

/** One scenario client: its device (kept across a relaunch) and its SDK instance. */
class Slot {
  constructor(session, name, profile) {
    this.session = session;
    this.name = name;
    this.profile = profile;
    this.device = session.environment.device(session.platform.websocket, name);
    this.clock = new DeviceClock(session.clock);        // the device's timers: sleep and throttling
    this.requests = new Map();
    this.client = this.newClient();
  }
  newClient() {
    const { session, name } = this;
    const client = new ChatClient({
      device: this.device, clock: this.clock, url: session.url, authKey: session.authKey,
      profile: this.profile,
      hooks: {
        socketOpening: () => session.event(name, { event: 'socketOpening' }),
        connection: (event, listeners, { error, reason }) => {
          const body = { event: 'connection', name: event, listeners };
          if (event === 'kicked' && reason) body.reason = reason;
          if (error) body.error = error;
          session.event(name, body);
        },
      },
    });
    session.environment.attach(this, client);
    return client;
  }
  relaunch() {
    this.discard();
    this.client = this.newClient();
  }
  discard() {
    this.client.shutdown();
    this.session.environment.detach(this);
    this.device.discard();
    this.requests.clear();
  }
}

/** One scenario: its clock, server and clients. */
class Session {
  constructor(driver, start) {
    this.platform = driver.platform;
    this.environment = driver.environment;
    this.write = driver.write;
    
    this.virtual = (start.clock?.mode ?? 'virtual') === 'virtual';
    this.clock = this.virtual ? new VirtualClock(start.clock?.now ?? 1700000000000) : new SystemClock();
    this.url = start.server.url;
    this.authKey = start.app?.authKey ?? 'mockchat-dev-key';
    this.slots = new Map();
  }
  event(client, body) {
    this.write({ type: 'event', client, at: this.clock.now(), ...body });
  }
  /** Lets the SDK's I/O run until nothing is under way and nothing changed for a few turns. */
  async settle() {
    const deadline = Date.now() + 5000;
    let quiet = 0;
    let before = this.traffic();
    while (quiet < 3 && Date.now() < deadline) {
      await this.platform.turn();
      const now = this.traffic();
      const busy = [...this.slots.values()].some((slot) => slot.device.busy());
      quiet = busy || now !== before ? 0 : quiet + 1;
      before = now;
    }
    return {
      now: this.clock.now(),
      nextDeadline: this.clock.nextDeadline(),
      sockets: this.sockets(),
      ...(this.platform.sockets ? {} : { opening: this.unanswered() }),
    };
  }
  unanswered() {
    return [...this.slots.values()].reduce((count, slot) => count + slot.device.unanswered.size, 0);
  }
  /** Every socket with its port; where the platform cannot tell ports (a page), the open
   * ones without it, matched by totals (the opening ones are counted by unanswered()). */
  sockets() {
    const list = [];
    for (const slot of this.slots.values()) {
      for (const s of slot.device.sockets) {
        const counts = { client: slot.name, state: s.state, sent: s.sent, received: s.received };
        const port = s.localPort();
        if (port !== null) list.push({ ...counts, port });
        else if (!this.platform.sockets && s.state === 'open') list.push(counts);
      }
    }
    return list;
  }
  traffic() {
    return JSON.stringify([...this.slots.values()].map((slot) =>
      [slot.device.unanswered.size, ...[...slot.device.sockets].map((s) => [s.state, s.sent, s.received])]));
  }
  end() {
    for (const slot of this.slots.values()) slot.discard();
    this.slots.clear();
  }
}

function settingsFrom(args) {
  return {
    autoEstablishSocketConnection: args.autoEstablishSocketConnection,
    presence: args.presence ?? 'all', region: args.region ?? 'us',
    reconnectKickEnable: args.reconnectKickEnable ?? false,
    deviceId: args.deviceId ?? 'default', platform: args.platform ?? 'mobile',
  };
}

function encodeResult(command, value) {
  switch (command) {
    case 'login': case 'getUser': case 'getLoggedInUser':
      return value ? { ok: true, user: value } : { ok: true };
    case 'fetchNext': return { ok: true, users: value.users, next: value.next };
    case 'getConnectionStatus': return { ok: true, status: value };
    case 'backgroundTaskEnabled': return { ok: true, flag: value };
    default: return { ok: true };
  }
}

function encodeError(error) {
  if (error instanceof ChatError) return { ok: false, error: { code: error.code, description: error.description } };
  return { ok: false, error: { code: 'ERR_SDK', description: String(error) } };
}

/** Answers the harness's messages in order. `environment` maps the app's lifecycle and the
 * network onto the platform (the browser page raises visibility and online/offline events). */
export class Driver {
  constructor({ write, platform, environment }) {
    this.write = write;
    this.platform = platform;
    this.environment = environment;
    this.session = null;
  }

  async handle(message) {
    let reply;
    try {
      reply = await this.answer(message);
    } catch (error) {
      reply = { ok: false, error: { code: error instanceof DriverError ? error.code : 'failed', message: String(error?.stack ?? error) } };
    }
    this.write({ type: 'reply', id: message.id, ...reply });
  }

  async answer(message) {
    switch (message.type) {
      case 'start':
        this.session?.end();
        this.session = new Session(this, message);
        return { ok: true };
      case 'end':
        this.session?.end();
        this.session = null;
        return { ok: true };
      case 'settle':
        return { ok: true, state: await this.current().settle() };
      case 'advance': {
        const session = this.current();
        if (!session.virtual) throw new DriverError('unsupported', 'advance in wall-clock mode');
        session.clock.advanceTo(Number(message.to), message.fire !== false);
        return { ok: true, state: await session.settle() };
      }
      case 'command':
        return this.command(this.current(), message);
      default:
        throw new DriverError('unknown-command', `no message type '${message.type}'`);
    }
  }

  current() {
    if (!this.session) throw new DriverError('failed', 'no scenario started');
    return this.session;
  }

  async command(session, { id, client: name, command, args = {} }) {
    const slot = session.slots.get(name);
    if (command === 'create') {
      const profile = PROFILES[args.profile ?? 'cometchat-ios'];
      if (!profile) throw new DriverError('unsupported', `no profile '${args.profile}'`);
      session.slots.set(name, new Slot(session, name, profile));
      return { ok: true };
    }
    if (![...ENVIRONMENT, ...CALLS, ...DEVICE_EVENTS, 'inspect'].includes(command)) {
      throw new DriverError('unknown-command', `no command '${command}'`);
    }
    if (!slot) throw new DriverError('unknown-client', `no client '${name}'`);
    if (ENVIRONMENT.includes(command)) {
      this.environmentCommand(slot, command, args);
      await session.settle();
      return { ok: true };
    }
    if (DEVICE_EVENTS.includes(command)) {
      const value = readDeviceEvent(command, args, (message) => new DriverError('bad-arguments', message));
      performDeviceEvent(slot, command, value, this.environment);
      await session.settle();
      return { ok: true };
    }
    if (command === 'inspect') {
      const c = slot.client;
      return { ok: true, state: { status: c.getConnectionStatus(), backgroundTaskEnabled: c.backgroundTaskEnabled(), loggedInUser: c.getLoggedInUser()?.uid ?? null } };
    }
    const outcome = this.call(slot, command, args);
    if (!(outcome instanceof Promise)) return { ok: true, result: encodeResult(command, outcome) };
    let done = null;
    outcome.then((value) => { done = encodeResult(command, value); }, (error) => { done = encodeError(error); });
    await session.settle();
    if (done) return { ok: true, result: done };
    outcome.then(() => {}, () => {}).finally(() => {
      if (this.session === session) session.event(name, { event: 'result', command: id, result: done });
    });
    return { ok: true, pending: true };
  }

  call(slot, command, args) {
    const c = slot.client;
    switch (command) {
      case 'init': return c.init(settingsFrom(args));
      case 'login': return c.login({ uid: args.uid, authKey: args.authKey, token: args.token });
      case 'logout': {
        const outcome = c.logout();
        outcome.then(() => slot.requests.clear(), () => {});   // a users request ends with the session
        return outcome;
      }
      case 'connect': return c.connect();
      case 'disconnect': return c.disconnect();
      case 'ping': return c.ping();
      case 'getLoggedInUser': return c.getLoggedInUser();
      case 'getConnectionStatus': return c.getConnectionStatus();
      case 'backgroundTaskEnabled': return c.backgroundTaskEnabled();
      case 'getUser':
        if (typeof args.uid !== 'string') throw new DriverError('bad-arguments', 'getUser needs a uid');
        return c.getUser(args.uid);
      case 'fetchNext': {
        const key = args.request ?? 'default';
        if (!slot.requests.has(key)) slot.requests.set(key, c.usersRequest({ limit: args.limit ?? 30, status: args.status ?? null }));
        return slot.requests.get(key).fetchNext();
      }
      case 'addUserListener': return c.addUserListener(args.listener, this.userListener(slot, args.listener));
      case 'removeUserListener': return c.removeUserListener(args.listener);
      case 'addConnectionListener': {
        const session = slot.session;
        return c.addConnectionListener(args.listener, (event) => session.event(slot.name, { event: 'connectionListener', listener: args.listener, name: event }));
      }
      case 'removeConnectionListener': return c.removeConnectionListener(args.listener);
      case 'configureServices': return c.configureServices(args.state ?? 'didBackground');
      default: throw new DriverError('unknown-command', `no command '${command}'`);
    }
  }

  /** The app's presence listener: it reports each call the SDK makes to it. */
  userListener(slot, listener) {
    const report = (change) => (user) => slot.session.event(slot.name, { event: 'presence', listener, change, user });
    return { onUserOnline: report('online'), onUserOffline: report('offline') };
  }

  environmentCommand(slot, command, args) {
    switch (command) {
      case 'relaunch': return slot.relaunch();
      case 'network':
        if (!['up', 'down', 'weak'].includes(args.condition)) throw new DriverError('bad-arguments', `network condition '${args.condition}'`);
        return this.environment.network(slot, args.condition);
      default:
        return this.environment.lifecycle(slot, command);
    }
  }
}

/** The environment of a process without a window (Node): each client's device keeps its
 * storage in memory, and the driver calls the SDK's lifecycle and network entry points. */
export const directEnvironment = {
  device: (websocket) => new Device(websocket),
  attach() {},
  detach() {},
  lifecycle(slot, command) { slot.client[command](); },
  network(slot, condition) {
    slot.client.networkChanged(condition);
    slot.device.setNetwork(condition);
  },
  networkPathChange(slot) { slot.client.networkPathChanged(); },
};
