#!/usr/bin/env node
/** MockChat driver protocol v1 (docs/DRIVER.md) for the JavaScript SDK, in Node over stdio.
 *
 *   node Drivers/js/driver/node-driver.mjs        # spawned by `mockchat test --sdk`
 *
 * JS_SDK_BUG=<name> switches on one seeded bug (sdk/bugs.mjs). */
import { createInterface } from 'node:readline';
import { setImmediate as turn } from 'node:timers/promises';
import { Driver, directEnvironment, hello } from './session.mjs';
import { nodeWebSocket } from './node-platform.mjs';
import { setBug } from '../sdk/bugs.mjs';

setBug(process.env.JS_SDK_BUG || null);

const platform = { name: 'node', websocket: nodeWebSocket, turn: () => turn(), sockets: true };
const write = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const driver = new Driver({ write, platform, environment: directEnvironment });

write(hello(platform));
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let message;
  try {
    message = JSON.parse(line);
    if (message === null || typeof message !== 'object' || Array.isArray(message)) throw new Error('not an object');
  } catch (error) {
    write({ type: 'error', message: `not a JSON message: ${error.message}` });
    continue;
  }
  await driver.handle(message);
}
driver.session?.end();
process.exit(0);
