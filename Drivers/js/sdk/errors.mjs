/** Error codes the SDK raises itself, with the descriptions it gives them. The codes are
 * the vendor's (000, "Common Error Codes"; 004, "Common Error Codes"); the two
 * descriptions the documents show as examples are used as they are given there. */

export const ERR = Object.freeze({
  ALREADY_CONNECTED: 'ERROR_WEBSOCKETS_ALLREADY_IN_CONNECTED_STATE',
  PING_NOT_AVAILABLE: 'ERROR_PING_NOT_AVAILABLE',
  NOT_LOGGED_IN: 'ERR_NOT_LOGGED_IN',
  WEBSOCKET: 'ERR_WEBSOCKET_ERROR',
  NO_INTERNET: 'ERR_NO_INTERNET',
  NOT_INITIALIZED: 'ERR_NOT_INITIALIZED',
  ALREADY_LOGGED_IN: 'ERR_ALREADY_LOGGED_IN',
  RECONNECT_KICK_REFUSED: 'ERR_RECONNECT_KICK_REFUSED',
  MALFORMED_REPLY: 'ERR_MALFORMED_REPLY',
});

export const DESCRIPTIONS = {
  [ERR.ALREADY_CONNECTED]: 'Web sockets connect called while web sockets are already connected',
  [ERR.PING_NOT_AVAILABLE]: 'Ping function is not available when auto establish web socket is on',
  [ERR.NOT_LOGGED_IN]: 'No user is logged in',
  [ERR.WEBSOCKET]: 'The connection to the chat server failed',
  [ERR.NO_INTERNET]: 'The device has no network connection',
  [ERR.NOT_INITIALIZED]: 'init() must be called before this method',
  [ERR.ALREADY_LOGGED_IN]: 'A user is already logged in; call logout() first',
  [ERR.RECONNECT_KICK_REFUSED]: 'Another mobile device is online; this reconnecting device stays offline',
  [ERR.MALFORMED_REPLY]: 'The server answered with something this SDK cannot read',
};

/** An error as the app receives it: a stable code and a description for people. */
export class ChatError extends Error {
  constructor(code, description) {
    super(`${code}: ${description ?? DESCRIPTIONS[code] ?? code}`);
    this.code = code;
    this.description = description ?? DESCRIPTIONS[code] ?? code;
  }
}
