/** Deliberate mistakes, off unless one is switched on (JS_SDK_BUG=<name> for the Node
 * driver, ?bug=<name> for the browser page). Each is a bug SDK teams really make. */

export const BUGS = Object.freeze({
  'backoff-shift': 'the reconnection schedule starts one step late (0.25 s instead of 0.05 s)',
  'backoff-not-reset': 'the backoff position is not reset after a successful connection, so a second outage starts late',
  'ping-in-auto': 'ping() is sent in auto mode instead of failing with ERROR_PING_NOT_AVAILABLE',
  'no-background-window': 'the 30 s background task never ends, so the socket stays open in the background',
  'reconnect-after-kick': 'a device.kicked event is treated as an ordinary loss, and the kicked device reconnects',
  'no-foreground-reset': 'a return to the foreground does not reset the backoff position',
  'no-network-reset': 'a network change does not reset the backoff position',
  'no-network-pause': 'the loop keeps trying while the device has no network instead of pausing',
  'reconnect-flag-missing': "the SDK's own reconnection attempts do not say reconnect: true, so reconnectKickEnable never applies",
  'no-open-deadline': 'an attempt has no deadline for the answer to its upgrade: an upgrade never answered leaves the SDK connecting for good',
  'no-login-deadline': 'a login reply that never comes is waited for for ever',
  'user-kept-after-logout': 'logout() forgets the user in memory but not on the device, so a relaunch logs it back in',
  'listener-not-removed': 'removeUserListener() keeps the listener, which goes on receiving presence events',
  'no-call-deadline': 'getUser(), fetchNext() and ping() have no reply deadline: a reply the server holds back leaves the call waiting for good on a connection that stays up',
  'no-pong-deadline': 'a keep-alive ping has no reply deadline: a silent connection is found only when the server gives up on it',
  'lost-login-ends-loop': 'a reconnection whose socket ends before its login is answered is taken for a refused login: an error event, and the loop ends',
  'waits-for-server-close': 'a close has no deadline of its own: a server that answers the close frame late, or never, holds the connection open as long as it likes',
  'dns-failure-ends-loop': 'a name-resolution failure is reported as a connection error and ends the reconnection loop',
  'ignores-network-change': "the OS's network path change is ignored: a silent old socket is found only by the next keep-alive",
  'uptime-timers': 'the timers run on the uptime clock, which stops while the device sleeps: overdue timers fire late after a wake',
  'wall-clock-idle-check': "the keep-alive timer reads a gap since the server's last frame longer than keepAliveInterval + pongTimeout as a dead connection, so a late (throttled) timer reconnects",
});

let active = null;

/** Switches one bug on (or none with null); refuses names it does not know. */
export function setBug(name) {
  if (name && !(name in BUGS)) throw new Error(`unknown seeded bug '${name}'; known: ${Object.keys(BUGS).join(', ')}`);
  active = name || null;
}

export function bug(name) { return active === name; }
