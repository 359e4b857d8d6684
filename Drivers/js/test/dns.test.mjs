import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Device } from '../sdk/transport.mjs';

/** docs/DRIVER.md, `dns`: an attempt fails with the error Node's resolver gives for the kind. */
test('a dns failure ends the attempt with ENOTFOUND, or EAI_AGAIN when temporary', async () => {
  const device = new Device({ create() { throw new Error('the name should not resolve'); } });
  const attempt = () => new Promise((resolve) => {
    device.open('ws://chat.example/v1/ws', { opened() {}, message() {}, closed: (code, reason) => resolve([code, reason]) });
  });
  device.setDnsFailures(1);
  assert.deepEqual(await attempt(), [1006, 'getaddrinfo ENOTFOUND chat.example']);
  device.setDnsFailures(2, 'temporary');
  assert.deepEqual(await attempt(), [1006, 'getaddrinfo EAI_AGAIN chat.example']);
  assert.deepEqual(await attempt(), [1006, 'getaddrinfo EAI_AGAIN chat.example']);
  assert.equal(device.resolverFails(), false, 'the failures are used up');
});
