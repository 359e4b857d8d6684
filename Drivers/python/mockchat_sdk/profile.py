"""Behaviour that differs between the two documented SDKs. Durations are seconds.

cometchat-ios follows 000/001/002 (CometChat connection behaviour, background updates);
nexconn-ios follows 003 (Nexconn reconnection and device conflict). Values the documents
leave open follow MockChat's docs/CONFORMANCE.md decisions, cited per field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# 003_679c9ad3fd31654b.txt, "Reconnection intervals"; CometChat documents none (D6).
BACKOFF_STEPS = (0.05, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
BACKOFF_REPEAT = 64.0


@dataclass(frozen=True)
class Profile:
    name: str
    # 000, "Auto Mode" (table): the socket closes as soon as the app is in the background.
    close_at_once_in_background: bool
    # 003, "Automatic reconnection": disconnect after about 2 minutes (D8); None: not used.
    background_disconnect_after: Optional[float]
    # 002, "Background updates behaviour": the background task lasts 30 s; None: no task (D9).
    background_task_window: Optional[float]
    # D16: keep-alive period and how long a reply may take (login replies too).
    keep_alive_interval: float = 10.0
    reply_timeout: float = 10.0
    # reconnection.open-deadline: how long an upgrade may go unanswered before the attempt
    # is abandoned (the rule book's openTimeout; MockChat's value).
    open_timeout: float = 10.0
    # transport.close-deadline: how long a close frame may go unanswered before the SDK
    # ends the connection itself (the rule book's closeTimeout; MockChat's value, D34).
    close_timeout: float = 5.0
    # calls.reply-deadline: how long getUser(), fetchNext() and ping() wait for their reply
    # before they fail (the rule book's callTimeout; MockChat's value, D16).
    call_timeout: float = 10.0
    # D12: a login that cannot reach the server keeps retrying (003, example step 1).
    retry_login_until_answered: bool = False


PROFILES = {
    "cometchat-ios": Profile("cometchat-ios", close_at_once_in_background=True,
                             background_disconnect_after=None, background_task_window=30.0),
    "nexconn-ios": Profile("nexconn-ios", close_at_once_in_background=False,
                           background_disconnect_after=120.0, background_task_window=None,
                           retry_login_until_answered=True),
}
