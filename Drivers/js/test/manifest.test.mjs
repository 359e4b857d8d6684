import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MANIFEST } from '../sdk/manifest.mjs';
import { PROFILES } from '../sdk/profiles.mjs';
import { DESCRIPTIONS, ERR } from '../sdk/errors.mjs';

const SECONDS = new Set(['keepAliveInterval', 'pongTimeout', 'openTimeout', 'callTimeout', 'closeTimeout', 'backgroundTaskWindow', 'backgroundDisconnectAfter']);

test('the manifest declares the values the SDK really uses, in every profile', () => {
  for (const profile of Object.values(PROFILES)) {
    for (const [name, declared] of Object.entries(MANIFEST.parameters)) {
      if (!(name in profile)) continue;
      const used = SECONDS.has(name) ? profile[name] / 1000 : profile[name];
      assert.equal(used, declared, `${profile.name}: ${name}`);
    }
  }
});

test('the declared descriptions are the ones the SDK gives', () => {
  assert.equal(MANIFEST.parameters.notInitializedDescription, DESCRIPTIONS[ERR.NOT_INITIALIZED]);
  assert.equal(MANIFEST.parameters.alreadyLoggedInDescription, DESCRIPTIONS[ERR.ALREADY_LOGGED_IN]);
  assert.notEqual(MANIFEST.parameters.backgroundCloseCode, 1001, "MockChat's default needs no declaration");
});

test('every waiver gives its reason', () => {
  assert.ok(MANIFEST.waivers.length >= 1);
  for (const waiver of MANIFEST.waivers) assert.match(waiver.reason, /\w{10,}/);
});
