/** Device events (docs/DRIVER.md, "Device events"): what the device around the SDK does on
 * its own. `readDeviceEvent` checks a command's args as the reference driver does. */

export const DEVICE_EVENTS = ['dns', 'sleep', 'throttle', 'networkChange'];

const KEYS = { dns: 'fail', sleep: 'ms', throttle: 'periodMs', networkChange: null };
const RANGES = { dns: [0, 1000000], sleep: [1, 86400000], throttle: [0, 3600000] };

/** `dns`: attempts to fail (0 clears) or null (until cleared); `sleep`: ms; `throttle`:
 * period in ms (0 ends it); `networkChange`: undefined. Throws `bad(message)`'s error. */
export function readDeviceEvent(command, args, bad) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw bad(`${command} needs an object of args`);
  const key = KEYS[command];
  for (const stray of Object.keys(args)) {
    if (stray !== key) throw bad(`${command} takes no '${stray}'${key ? `, only '${key}'` : ''}`);
  }
  if (key === null) return undefined;
  const value = args[key];
  if (command === 'dns' && typeof value === 'boolean') return value ? null : 0;
  const [low, high] = RANGES[command];
  if (!Number.isInteger(value) || value < low || value > high) throw bad(`${command} needs '${key}': an integer from ${low} to ${high}`);
  return value;
}

/** Carries one out on a scenario client: the device's resolver and clock, or the OS's
 * notice of a new network path (through the platform's `environment`). */
export function performDeviceEvent(slot, command, value, environment) {
  switch (command) {
    case 'dns': return slot.device.setDnsFailures(value);
    case 'sleep': return slot.clock.sleep(value);
    case 'throttle': return slot.clock.setThrottle(value);
    default: return environment.networkPathChange(slot);
  }
}
