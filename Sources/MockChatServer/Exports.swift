/// The pure rules (`PresenceEngine`, `DevicePolicy`, the users and app settings) are part
/// of every API of this module, so its users see them without importing PresenceCore.
@_exported import PresenceCore
