/** The v1 transport (docs/PROTOCOL.md): one WebSocket per connection attempt, JSON text
 * frames, replies matched by id. A `Device` stands for the machine the SDK runs on: its
 * network (up, down, weak), the storage that survives a relaunch, and its open sockets,
 * so that a driver can tell when the SDK's I/O has settled.
 *
 * The WebSocket itself comes from a platform adapter (Node's `ws`, the browser's
 * WebSocket): `{create(url), send(ws, text, done), close(ws, code), abort(ws), port(ws),
 * ending(ws)}`, where `create` returns an object with onopen/onmessage/onclose/onerror. */

export class Device {
  /** `storage`: where the logged-in user survives a relaunch ({load(), save(value)}). */
  constructor(platform, storage = new MemoryStorage()) {
    this.platform = platform;
    this.network = 'up';
    this.dnsFailures = 0;        // attempts left to fail at name resolution; null: all of them
    this.dnsError = 'notFound';  // which resolver error they fail with (notFound | temporary)
    this.storage = storage;
    this.sockets = new Set();
    /** WebSockets whose upgrade is under way on a platform that cannot tell their port (a
     * page), from creation until answered or closed, the SDK's abandoned ones included:
     * the harness counts them against the upgrades the server holds. */
    this.unanswered = new Set();
  }

  /** Opens a socket; `handlers`: {opened(), message(frame), closed(code, reason)}. */
  open(url, handlers) {
    return new V1Socket(this, url, handlers);
  }

  /** `down` resets every socket, as a lost network does; `weak` loses what the server sends. */
  setNetwork(condition) {
    this.network = condition;
    if (condition === 'down') for (const socket of [...this.sockets]) socket.abort();
  }

  /** The next `attempts` connections fail at name resolution (null: until cleared), with
   * Node's error for a name that does not exist (ENOTFOUND) or, for `temporary`, for a
   * resolver that failed for now (EAI_AGAIN). */
  setDnsFailures(attempts, error = 'notFound') {
    this.dnsFailures = attempts;
    this.dnsError = error;
  }

  /** The resolver's part of opening a socket: whether this attempt fails there. */
  resolverFails() {
    if (this.dnsFailures === 0) return false;
    if (this.dnsFailures !== null) this.dnsFailures -= 1;
    return true;
  }

  /** The app process is gone: every socket is reset. */
  discard() {
    for (const socket of [...this.sockets]) socket.abort();
  }

  /** Whether I/O is under way that the SDK will hear of: a handshake, a write, an ending stream. */
  busy() {
    for (const socket of this.sockets) if (socket.busy()) return true;
    return false;
  }
}

/** Storage of a process that keeps it in memory (a relaunch keeps the Device). */
export class MemoryStorage {
  load() { return this.value ?? null; }
  save(value) { this.value = value; }
}

export class V1Socket {
  constructor(device, url, handlers) {
    this.device = device;
    this.handlers = handlers;
    this.state = 'opening';
    this.port = null;
    this.sent = 0;
    this.received = 0;
    this.writing = 0;
    this.finished = false;
    this.onFinish = null;        // called once the socket has ended (the client's close deadline)
    device.sockets.add(this);
    if (device.network === 'down') {
      this.ws = null;
      queueMicrotask(() => this.finish(1006, ''));
      return;
    }
    if (device.resolverFails()) {                       // the error Node's resolver gives
      this.ws = null;
      const code = device.dnsError === 'temporary' ? 'EAI_AGAIN' : 'ENOTFOUND';
      queueMicrotask(() => this.finish(1006, `getaddrinfo ${code} ${new URL(url).hostname}`));
      return;
    }
    const ws = this.ws = device.platform.create(url);
    if (!device.platform.openingPort) device.unanswered.add(ws);
    ws.onopen = () => {
      device.unanswered.delete(ws);
      if (this.finished) return;
      this.state = 'open';
      this.port = device.platform.port(ws);
      handlers.opened();
    };
    ws.onmessage = (message) => {
      if (this.finished) return;
      if (typeof message.data !== 'string') return;
      this.received += 1;
      if (device.network === 'weak') return;         // a weak network loses what the server sends
      let frame;
      try { frame = JSON.parse(message.data); } catch { return; }   // not JSON: ignored like an unknown event
      if (frame !== null && typeof frame === 'object' && !Array.isArray(frame)) handlers.message(frame);
    };
    ws.onerror = () => {};
    ws.onclose = (event) => {
      device.unanswered.delete(ws);
      this.finish(event.code, event.reason ?? '');
    };
  }

  send(frame) {
    if (this.finished || this.state !== 'open') return;
    this.writing += 1;
    this.device.platform.send(this.ws, JSON.stringify(frame), () => {
      this.writing -= 1;
      this.sent += 1;
    });
  }

  /** A closing handshake; the socket stays listed until the stream has ended. */
  close(code) {
    if (this.finished || !this.ws) return;
    this.device.platform.close(this.ws, code);
  }

  /** Resets the connection: no close frame. */
  abort() {
    if (this.finished) return;
    if (this.ws) this.device.platform.abort(this.ws);
    this.finish(1006, '');
  }

  /** The local TCP port: once open, or while the upgrade is on its way when the platform
   * can tell (Node); null before. */
  localPort() {
    if (this.port !== null || this.state !== 'opening' || !this.ws) return this.port;
    return this.device.platform.openingPort?.(this.ws) ?? null;
  }

  /** Whether I/O of this socket is under way. An upgrade sent and not yet answered is the
   * server's to answer or to hold: the harness matches that socket with the server's side,
   * by its port, or where the platform cannot tell it, by `Device.unanswered`. */
  busy() {
    const connecting = this.state === 'opening' && this.localPort() === null && Boolean(this.device.platform.openingPort);
    return connecting || this.writing > 0
      || (this.ws !== null && this.device.platform.ending(this.ws));
  }

  finish(code, reason) {
    if (this.finished) return;
    this.finished = true;
    this.state = 'closed';
    this.device.sockets.delete(this);
    this.onFinish?.();
    this.handlers.closed(code, reason);
  }
}
