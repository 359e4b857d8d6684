/** The SDK in a web page: the browser's own WebSocket, storage in localStorage, and the
 * page's events as the app's lifecycle and the device's network:
 *
 * | page event | SDK entry point |
 * |---|---|
 * | window `blur` | willResignActive() |
 * | document `visibilitychange` to hidden / visible | didBackground() / foreground() |
 * | window `offline` / `online` | networkChanged('down' / 'up') |
 * | navigator.connection `change` to effectiveType `slow-2g` | networkChanged('weak') |
 * | navigator.connection `change` with the effectiveType unchanged | networkPathChanged() (an interface change) |
 */

/** The browser's WebSocket as sdk/transport.mjs wants it. A page cannot reset a TCP
 * connection, read its local port, or send close codes other than 1000 and 3000-4999. */
export const browserWebSocket = {
  create: (url) => new WebSocket(url),
  send: (ws, text, done) => { ws.send(text); done(); },
  close: (ws, code) => ws.close(code === 1000 || (code >= 3000 && code < 5000) ? code : 1000),
  abort: (ws) => ws.close(),
  port: () => null,
  ending: () => false,
};

/** The logged-in user kept in localStorage under `key`, so that it survives a reload. */
export class LocalStorage {
  constructor(key, store = globalThis.localStorage) {
    this.key = key;
    this.store = store;
  }
  load() {
    const text = this.store.getItem(this.key);
    return text === null ? null : JSON.parse(text);
  }
  save(value) {
    if (value === null) this.store.removeItem(this.key);
    else this.store.setItem(this.key, JSON.stringify(value));
  }
}

/** Wires a client to a page (`win`: a window, such as an iframe's). Returns the unbinder. */
export function bindToPage(client, win) {
  const doc = win.document;
  const connection = win.navigator.connection;
  const handlers = [
    [win, 'blur', () => client.willResignActive()],
    [doc, 'visibilitychange', () => (doc.visibilityState === 'hidden' ? client.didBackground() : client.foreground())],
    [win, 'offline', () => client.networkChanged('down')],
    [win, 'online', () => client.networkChanged('up')],
  ];
  let type = connection?.effectiveType;
  const connectionChanged = () => {
    const before = type;
    type = connection.effectiveType;
    if (type === before) client.networkPathChanged();
    else client.networkChanged(type === 'slow-2g' ? 'weak' : 'up');
  };
  if (connection) handlers.push([connection, 'change', connectionChanged]);
  for (const [target, name, handler] of handlers) target.addEventListener(name, handler);
  return () => { for (const [target, name, handler] of handlers) target.removeEventListener(name, handler); };
}
