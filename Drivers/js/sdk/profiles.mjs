/** What differs between the two vendor SDKs this SDK follows, and the values an app may set.
 * Durations are milliseconds. */

const BACKOFF = [50, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000];

/** This SDK's own values where the documents leave the choice to the SDK (README, "The
 * SDK's own values"); sdk/manifest.mjs declares them to MockChat. */
const COMMON = {
  defaultAutoMode: true,               // 000 "Auto Mode"; 003 "Automatic reconnection"
  keepAliveInterval: 10000,            // heartbeat period while the socket is kept
  backgroundCloseCode: 1000,           // the close code of a background close: browsers cannot send 1001
  pongTimeout: 10000,                  // a reply missing this long is a heartbeat timeout
  openTimeout: 10000,                  // an upgrade unanswered this long ends the attempt (reconnection.open-deadline)
  callTimeout: 10000,                  // getUser(), fetchNext() and ping() wait this long for their reply (calls.reply-deadline)
  closeTimeout: 5000,                  // a close frame unanswered this long ends the connection (transport.close-deadline)
  backoff: BACKOFF,                    // 003 "Reconnection intervals"
  backoffRepeat: 64000,
};

export const PROFILES = Object.freeze({
  'cometchat-ios': Object.freeze({
    ...COMMON,
    name: 'cometchat-ios',
    backgroundTaskWindow: 30000,       // 002 "Background updates behaviour"
    backgroundDisconnectAfter: null,   // 000 "Auto Mode": closed at once
    retryLoginUntilAnswered: false,    // 000 "Common Error Codes": the login fails
  }),
  'nexconn-ios': Object.freeze({
    ...COMMON,
    name: 'nexconn-ios',
    backgroundTaskWindow: null,        // 003 describes no background task
    backgroundDisconnectAfter: 120000, // 003 "Automatic reconnection": about two minutes
    retryLoginUntilAnswered: true,     // 003 "Reconnection kick strategy", example step 1
  }),
});

/** The profile with an app's own values on top (`{keepAliveInterval: 25000}`). */
export function withValues(profile, values = {}) {
  return Object.freeze({ ...profile, ...values });
}

/** The wait before the next attempt, after `waits` earlier waits of this round. */
export function backoffDelay(profile, waits) {
  return waits < profile.backoff.length ? profile.backoff[waits] : profile.backoffRepeat;
}
