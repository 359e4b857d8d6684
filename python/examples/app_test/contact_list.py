"""A fake app screen built on the Python SDK (Drivers/python/mockchat_sdk): who of my
contacts is online, kept from the SDK's presence listener. It stands for your app in
the test beside it."""

from __future__ import annotations

from mockchat_sdk import PROFILES, AppSettings, ChatClient, Device, SystemClock


class ContactList:
    def __init__(self, server_url: str, uid: str, auth_key: str = "mockchat-dev-key"):
        self.uid, self.online = uid, set()
        self.client = ChatClient(Device(), SystemClock(), server_url, auth_key, PROFILES["cometchat-ios"])

    async def open(self) -> None:
        """Starts the SDK, logs in and listens for presence, as the app does at launch."""
        self.client.add_user_listener("contact-list", self)
        await self.client.init(AppSettings(auto_establish_socket_connection=True, presence="all",
                                           device_id=f"{self.uid}-phone"))
        await self.client.login(uid=self.uid)

    def close(self) -> None:
        self.client.shutdown()

    # the SDK's user listener
    def on_user_online(self, user: dict) -> None:
        self.online.add(user["uid"])

    def on_user_offline(self, user: dict) -> None:
        self.online.discard(user["uid"])
