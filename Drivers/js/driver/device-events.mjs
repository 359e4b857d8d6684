/** Device events (docs/DRIVER.md, "Device events"): what the device around the SDK does on
 * its own. `readDeviceEvent` checks a command's args as the reference driver does. */

export const DEVICE_EVENTS = ['dns', 'sleep', 'throttle', 'networkChange'];

const KEYS = { dns: ['fail', 'error'], sleep: ['ms'], throttle: ['periodMs'], networkChange: [] };
const RANGES = { dns: [0, 1000000], sleep: [1, 86400000], throttle: [0, 3600000] };
/** The resolver errors a `dns` event can give; the first is the default. */
export const DNS_ERRORS = ['notFound', 'temporary'];

/** `dns`: `{attempts, error}`, the attempts to fail (0 clears, null: until cleared) and
 * the resolver error; `sleep`: ms; `throttle`: period in ms (0 ends it); `networkChange`:
 * undefined. Throws `bad(message)`'s error. */
export function readDeviceEvent(command, args, bad) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw bad(`${command} needs an object of args`);
  const keys = KEYS[command];
  for (const stray of Object.keys(args)) {
    if (!keys.includes(stray)) throw bad(`${command} takes no '${stray}'${keys.length ? `, only ${keys.map((k) => `'${k}'`).join(' and ')}` : ''}`);
  }
  if (keys.length === 0) return undefined;
  if (command === 'dns') {
    const error = dnsError(args, bad);
    return { attempts: count(command, args, bad), error };
  }
  return count(command, args, bad);
}

/** The event's number (its first key), in its range; `dns` also takes true (until cleared)
 * and false (0). */
function count(command, args, bad) {
  const key = KEYS[command][0];
  const value = args[key];
  if (command === 'dns' && typeof value === 'boolean') return value ? null : 0;
  const [low, high] = RANGES[command];
  if (!Number.isInteger(value) || value < low || value > high) throw bad(`${command} needs '${key}': an integer from ${low} to ${high}`);
  return value;
}

/** A `dns` event's resolver error: `notFound` (the default) or `temporary`. */
function dnsError(args, bad) {
  const error = args.error ?? DNS_ERRORS[0];
  if (!DNS_ERRORS.includes(error)) throw bad(`dns needs 'error': one of ${DNS_ERRORS.join(', ')}`);
  return error;
}

/** Carries one out on a scenario client with `readDeviceEvent`'s value: the device's
 * resolver and clock, or the OS's notice of a new network path (through the platform's
 * `environment`). */
export function performDeviceEvent(slot, command, value, environment) {
  switch (command) {
    case 'dns': return slot.device.setDnsFailures(value.attempts, value.error);
    case 'sleep': return slot.clock.sleep(value);
    case 'throttle': return slot.clock.setThrottle(value);
    default: return environment.networkPathChange(slot);
  }
}
