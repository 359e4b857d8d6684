/** The WebSocket of Node: Debian's `node-ws` package (no registry needed). */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function loadWs() {
  for (const path of ['ws', '/usr/share/nodejs/ws', '/usr/lib/nodejs/ws']) {
    try { return require(path); } catch { /* next */ }
  }
  throw new Error("the 'ws' module is missing: install Debian's node-ws (scripts/js-sdk-env)");
}

const WebSocket = loadWs();

export const nodeWebSocket = {
  create: (url) => new WebSocket(url, { perMessageDeflate: false }),
  send: (ws, text, done) => ws.send(text, () => done()),
  close: (ws, code) => ws.close(code),
  abort: (ws) => ws.terminate(),
  port: (ws) => ws._socket?.localPort ?? null,
  /** The TCP connection of an upgrade under way: made once it has a local port. */
  openingPort: (ws) => ws._req?.socket?.localPort ?? null,
  /** Both close frames have crossed; what is left is the end of the TCP stream. */
  ending: (ws) => ws.readyState === WebSocket.CLOSING && ws._closeFrameSent && ws._closeFrameReceived,
};

export { WebSocket };
