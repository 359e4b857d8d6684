"""A small chat SDK written from the SDK documents and MockChat's wire protocol v1.

It exists to show that MockChat's conformance catalogue can drive an SDK that is not
MockChat's own reference model. The public API is :class:`ChatClient`.
"""

from .clock import Clock, SystemClock, VirtualClock
from .errors import ChatError
from .profile import Profile, PROFILES
from .client import AppSettings, ChatClient, Device

__all__ = ["AppSettings", "ChatClient", "ChatError", "Clock", "Device", "Profile",
           "PROFILES", "SystemClock", "VirtualClock"]
