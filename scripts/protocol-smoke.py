#!/usr/bin/env python3
"""Smoke test of the MockChat wire protocol, written against docs/PROTOCOL.md only.

It starts nothing: point it at a running server whose users are the built-in
fixtures and where alice and bob are offline (a freshly started server), e.g.

    scripts/protocol-smoke.py --url ws://127.0.0.1:8080/v1/ws

Every check prints one line. The first mismatch stops the run with a message and
exit status 1; success ends with "protocol-smoke: N passed, 0 failed".
"""

import argparse
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_wire import CheckFailed, Connection, expect  # noqa: E402

# The user object (docs/PROTOCOL.md, "The user object"): field -> accepted JSON types.
USER_FIELDS = {
    "uid": (str,),
    "name": (str, type(None)),
    "avatar": (str, type(None)),
    "link": (str, type(None)),
    "role": (str, type(None)),
    "status": (str,),
    "statusMessage": (str, type(None)),
    "lastActiveAt": (int, float),
    "hasBlockedMe": (bool,),
    "blockedByMe": (bool,),
    "deactivatedAt": (int, float),
    "tags": (list,),
    "metadata": (dict,),
}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_user(user, uid, status):
    expect(isinstance(user, dict), f"user object is not an object: {user!r}")
    missing = [name for name in USER_FIELDS if name not in user]
    expect(not missing, f"user object lacks {missing}: {user!r}")
    for name, types in USER_FIELDS.items():
        value = user[name]
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        expect(ok, f"user field {name!r} has the wrong type: {value!r}")
    expect(user["uid"] == uid, f"expected uid {uid!r}, got {user['uid']!r}")
    expect(user["status"] == status, f"expected status {status!r}, got {user['status']!r}")


async def login(url, timeout, name, uid, auth_key, device_id, platform, presence, **extra):
    client = await Connection.open(name, url, timeout)
    request_id = await client.send("login", uid=uid, authKey=auth_key, deviceId=device_id,
                                   platform=platform, presence=presence, **extra)
    result = await client.result(request_id, f"login of {uid}")
    check_user(result.get("user"), uid, "online")
    expect(isinstance(result.get("connectionId"), str), f"login reply lacks connectionId: {result!r}")
    expect(is_number(result.get("serverTime")), f"login reply lacks a numeric serverTime: {result!r}")
    return client


async def run(args, passed):
    url, timeout, key = args.url, args.timeout, args.auth_key

    def ok(text):
        passed.append(text)
        print(f"ok   {len(passed):2d} {text}", flush=True)

    # 1. Two logins; alice subscribes to everyone and sees bob come online.
    alice = await login(url, timeout, "alice", "alice", key, "smoke-alice-laptop", "desktop", {"mode": "all"})
    ok("alice logs in (desktop, presence mode all)")
    bob = await login(url, timeout, "bob#1", "bob", key, "smoke-bob-phone-1", "mobile", {"mode": "friends"})
    ok("bob logs in (mobile)")
    event = await alice.receive("bob's user.online")
    expect(event.get("event") == "user.online", f"alice: expected user.online, got {event!r}")
    check_user(event.get("user"), "bob", "online")
    ok("alice receives user.online for bob with the full user object")

    # 2. ping -> pong with the server's clock.
    request_id = await alice.send("ping")
    result = await alice.result(request_id, "ping")
    expect(result.get("pong") is True, f"ping result lacks pong: true: {result!r}")
    expect(is_number(result.get("serverTime")), f"ping result lacks a numeric serverTime: {result!r}")
    ok("ping is answered with pong and serverTime")

    # 3. A malformed frame gets ERR_BAD_REQUEST (id null) and the connection lives on.
    await alice.send_raw("{this is not json")
    message = await alice.receive("the reply to a malformed frame")
    expect(message.get("id", "absent") is None, f"error for a malformed frame should carry id null: {message!r}")
    expect((message.get("error") or {}).get("errorCode") == "ERR_BAD_REQUEST",
           f"expected ERR_BAD_REQUEST for a malformed frame, got {message!r}")
    request_id = await alice.send("ping")
    await alice.result(request_id, "ping after a malformed frame")
    ok("malformed frame gets ERR_BAD_REQUEST and the connection keeps working")

    # 4. users.get of a uid nobody has.
    request_id = await alice.send("users.get", uid="smoke-no-such-user")
    await alice.error(request_id, "ERR_UID_NOT_FOUND", "users.get of an unknown uid")
    ok("users.get of an unknown uid gets ERR_UID_NOT_FOUND")

    # 5. users.list with a limit outside 1...100.
    request_id = await alice.send("users.list", limit=0)
    await alice.error(request_id, "ERR_INVALID_LIMIT", "users.list with limit 0")
    ok("users.list with limit 0 gets ERR_INVALID_LIMIT")

    # 6. A second mobile device of bob kicks the first; bob never looks offline. It logs in
    # as a reconnecting SDK asking for the reconnect kick strategy, which changes nothing
    # while the app's clientKickControl is off (section 8).
    bob2 = await login(url, timeout, "bob#2", "bob", key, "smoke-bob-phone-2", "mobile", {"mode": "friends"},
                       reconnect=True, reconnectKickEnable=True)
    kicked = await bob.receive("device.kicked")
    expect(kicked.get("event") == "device.kicked", f"bob#1: expected device.kicked, got {kicked!r}")
    expect(kicked.get("byDeviceId") == "smoke-bob-phone-2", f"device.kicked names the wrong device: {kicked!r}")
    expect(kicked.get("byPlatform") == "mobile", f"device.kicked names the wrong platform: {kicked!r}")
    expect(isinstance(kicked.get("reason"), str), f"device.kicked lacks a reason: {kicked!r}")
    code = await bob.closed("device.kicked")
    expect(code == 4001, f"bob#1: expected close code 4001 after device.kicked, got {code}")
    ok("second mobile device of bob: the first gets device.kicked, then close 4001")
    # Replies and events on one connection keep their order, so a pong received now
    # comes after any presence event the kick could have caused.
    request_id = await alice.send("ping")
    while True:
        message = await alice.receive("the pong that follows the kick")
        if message.get("event") in ("user.offline", "user.online"):
            uid = (message.get("user") or {}).get("uid")
            expect(uid != "bob", f"alice saw {message['event']} for bob during the device switch")
            continue
        expect(message.get("id") == request_id and "result" in message, f"alice: unexpected frame {message!r}")
        break
    ok("alice sees no user.offline for bob while his device switches")

    # 7. bob logs out: reply, close 1000, and alice sees him go offline.
    request_id = await bob2.send("logout")
    result = await bob2.result(request_id, "logout")
    expect(result == {}, f"logout result should be an empty object: {result!r}")
    code = await bob2.closed("logout")
    expect(code == 1000, f"bob#2: expected close code 1000 after logout, got {code}")
    ok("bob logs out: empty result, then close 1000")
    event = await alice.receive("bob's user.offline")
    expect(event.get("event") == "user.offline", f"alice: expected user.offline, got {event!r}")
    check_user(event.get("user"), "bob", "offline")
    expect(is_number(event["user"].get("lastActiveAt")) and event["user"]["lastActiveAt"] > 0,
           f"user.offline lacks a lastActiveAt: {event!r}")
    ok("alice receives user.offline for bob with lastActiveAt")

    await alice.close()


def main():
    parser = argparse.ArgumentParser(description="MockChat protocol smoke test (docs/PROTOCOL.md).")
    parser.add_argument("--url", required=True, help="WebSocket endpoint, ws://127.0.0.1:PORT/v1/ws")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for any frame (default 5)")
    parser.add_argument("--auth-key", default="mockchat-dev-key", help="the app's auth key (Fixtures/app.json)")
    args = parser.parse_args()

    passed = []
    failure = None
    try:
        asyncio.run(run(args, passed))
    except CheckFailed as error:
        failure = str(error)
    except Exception as error:  # a bug or an unexpected library error is a failure too
        failure = f"unexpected {type(error).__name__}: {error}"
    if failure:
        print(f"FAIL {len(passed) + 1:2d} {failure}", flush=True)
        print(f"protocol-smoke: {len(passed)} passed, 1 failed", flush=True)
        sys.exit(1)
    print(f"protocol-smoke: {len(passed)} passed, 0 failed", flush=True)


if __name__ == "__main__":
    main()
