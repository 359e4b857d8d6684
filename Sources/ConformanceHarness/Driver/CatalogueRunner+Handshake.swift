import EventLoop

extension CatalogueRunner.DriverSource {
    /// The driver's handshake (docs/DRIVER.md, "Handshake"): reaches the driver (over
    /// stdio, starts the command), reads its `hello` and lets it go. Tools that write
    /// their own scenarios use it to stay within what the driver supports.
    public func handshake(timeout: Double) throws(ScenarioError) -> DriverCapabilities {
        let loop: EventLoop
        do {
            loop = try EventLoop(clockMode: .virtual(start: .virtualEpoch))
        } catch {
            throw ScenarioError("cannot create an event loop: \(error)")
        }
        defer { loop.shutdown() }
        let link = try DriverLink(channel: try channel(), loop: loop, timeout: timeout)
        defer { link.end() }
        return link.capabilities
    }
}
