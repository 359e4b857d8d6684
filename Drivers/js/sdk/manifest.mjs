/** What this SDK declares to MockChat (docs/SPECIFICATION.md, "The manifest"): its own
 * values where the rule book lets an SDK choose, and the one decision it waives. The
 * drivers send it in their hello. test/manifest.test.mjs checks it against the profiles. */
import { DESCRIPTIONS, ERR } from './errors.mjs';

export const MANIFEST = Object.freeze({
  sdk: { name: 'mockchat-js-sdk', version: '0.2.0' },
  parameters: {
    backgroundCloseCode: 1000,         // a page's WebSocket may only send 1000 or 3000-4999
    notInitializedDescription: DESCRIPTIONS[ERR.NOT_INITIALIZED],
    alreadyLoggedInDescription: DESCRIPTIONS[ERR.ALREADY_LOGGED_IN],
  },
  waivers: [
    {
      rule: 'background.task-flag-kept-in-foreground',
      reason: 'backgroundTaskEnabled() answers whether a background task runs now; back in the foreground none runs, so it is false',
    },
  ],
});
