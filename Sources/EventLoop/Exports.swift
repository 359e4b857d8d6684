/// `Instant` and `SplitMix64` are part of every API of this module (timers, masks), so
/// its users see them without importing the values module themselves.
@_exported import MockChatCore
