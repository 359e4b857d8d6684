/** Driver protocol v1 in a web page: it dials `mockchat test --sdk-listen` over the
 * browser's WebSocket (?harness=ws://HOST:PORT/) and runs the SDK in the page, on the
 * driver's virtual clock. Each scenario client is an app in its own iframe: the SDK is
 * bound to that iframe's page events (sdk/browser.mjs), and the driver raises them:
 * visibility for background and foreground, online/offline and the connection type
 * for the network. ?bug=<name> switches on one seeded bug. */
import { Driver, hello } from '../driver/session.mjs';
import { Device } from '../sdk/transport.mjs';
import { LocalStorage, bindToPage, browserWebSocket } from '../sdk/browser.mjs';
import { setBug } from '../sdk/bugs.mjs';

const query = new URLSearchParams(location.search);
const status = document.getElementById('status');
const apps = document.getElementById('apps');

/** One trip through the event loop, not clamped like nested timers. */
const turn = () => new Promise((resolve) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve();
  channel.port2.postMessage(null);
});

/** Raises a page event on a client's iframe, with the state it reports set first. */
function set(target, property, value) {
  Object.defineProperty(target, property, { configurable: true, get: () => value });
}

const pageEnvironment = {
  frames: new Map(),
  device(websocket, name) {
    const storage = new LocalStorage(`mockchat-js-sdk/${name}`);
    storage.save(null);                                // a scenario starts on a fresh device
    return new Device(websocket, storage);
  },
  attach(slot, client) {
    const frame = document.createElement('iframe');
    frame.title = `client ${slot.name}`;
    apps.append(frame);
    const win = frame.contentWindow;
    set(win.document, 'visibilityState', 'visible');
    set(win.navigator, 'onLine', slot.device.network !== 'down');
    this.frames.set(slot, { frame, unbind: bindToPage(client, win) });
  },
  detach(slot) {
    const app = this.frames.get(slot);
    if (!app) return;
    app.unbind();
    app.frame.remove();
    this.frames.delete(slot);
  },
  lifecycle(slot, command) {
    const win = this.frames.get(slot).frame.contentWindow;
    if (command === 'willResignActive') return win.dispatchEvent(new win.Event('blur'));
    set(win.document, 'visibilityState', command === 'didBackground' ? 'hidden' : 'visible');
    win.document.dispatchEvent(new win.Event('visibilitychange'));
  },
  network(slot, condition) {
    const win = this.frames.get(slot).frame.contentWindow;
    const before = slot.device.network;
    set(win.navigator, 'onLine', condition !== 'down');
    if (condition === 'weak' || (before === 'weak' && condition === 'up')) {
      set(win.navigator.connection, 'effectiveType', condition === 'weak' ? 'slow-2g' : '4g');
      if (before === 'down') win.dispatchEvent(new win.Event('online'));
      win.navigator.connection.dispatchEvent(new win.Event('change'));
    } else {
      win.dispatchEvent(new win.Event(condition === 'down' ? 'offline' : 'online'));
    }
    slot.device.setNetwork(condition);                 // the simulated device: a page cannot cut its own network
  },
  /** An interface change: the connection changes while its effective type stays. */
  networkPathChange(slot) {
    const win = this.frames.get(slot).frame.contentWindow;
    win.navigator.connection.dispatchEvent(new win.Event('change'));
  },
};

/** Dials the harness; a harness not listening (yet) is dialled again every 100 ms for a
 * minute. Each connection gets its own driver. When an open connection ends, its scenario
 * is ended and the page dials again: the harness drops a driver it found misbehaving and
 * waits for it to dial in for the next scenario (docs/DRIVER.md), and at the end of the
 * run nobody answers any more and the page is done. */
function dial(harness, platform, attempt = 0) {
  const ws = new WebSocket(harness);
  const driver = new Driver({ write: (message) => ws.send(JSON.stringify(message)), platform, environment: pageEnvironment });
  let opened = false;
  let queue = Promise.resolve();
  ws.onopen = () => { opened = true; status.textContent = 'connected to the harness'; driver.write(hello(platform)); };
  ws.onmessage = (event) => {
    queue = queue.then(async () => {
      let message;
      try {
        message = JSON.parse(event.data);
        if (message === null || typeof message !== 'object' || Array.isArray(message)) throw new Error('not an object');
      } catch (error) {
        ws.send(JSON.stringify({ type: 'error', message: `not a JSON message: ${error.message}` }));
        return;
      }
      await driver.handle(message);
    });
  };
  ws.onclose = () => {
    if (opened) {
      status.textContent = 'the harness closed the connection; dialling again';
      queue = queue.then(() => { driver.session?.end(); driver.session = null; dial(harness, platform); });
    } else if (attempt < 600) {
      setTimeout(() => dial(harness, platform, attempt + 1), 100);
    } else {
      status.textContent = 'done'; document.title = 'done';
    }
  };
}

function run() {
  const harness = query.get('harness');
  if (!harness) { status.textContent = 'no ?harness=ws://HOST:PORT/ given'; return; }
  setBug(query.get('bug'));
  dial(harness, { name: 'chromium', websocket: browserWebSocket, turn, sockets: false });
}

run();
