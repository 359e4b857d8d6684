/** Deliberate mistakes, off unless one is switched on (JS_SDK_BUG=<name> for the Node
 * driver, ?bug=<name> for the browser page). Each is a bug SDK teams really make. */

export const BUGS = Object.freeze({});

let active = null;

/** Switches one bug on (or none with null); refuses names it does not know. */
export function setBug(name) {
  if (name && !(name in BUGS)) throw new Error(`unknown seeded bug '${name}'; known: ${Object.keys(BUGS).join(', ')}`);
  active = name || null;
}

export function bug(name) { return active === name; }
