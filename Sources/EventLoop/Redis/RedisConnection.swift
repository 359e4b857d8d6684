import CLibUV

/// One asynchronous connection to Redis, driven by hiredis's libuv adapter on the
/// loop's own thread: no second event loop and no thread.
///
/// A connection is either a command connection (``send(_:reply:)``) or a subscriber
/// (``subscribe(_:onMessage:)``), as Redis requires. When the connection fails or ends,
/// `onDisconnect` runs once and the object is spent; the owner makes a new one to retry.
///
/// A connection that the kernel joined to itself counts as failed: connecting to a free
/// port in the ephemeral range (a Redis that is restarting) can be given that same port
/// as its source, and such a socket answers every command with the command itself.
public final class RedisConnection: HandleOwner {
    /// Called once the TCP connection to Redis is up.
    public var onConnect: (() -> Void)?
    /// Called once when connecting fails or the connection ends, with what went wrong.
    public var onDisconnect: ((String) -> Void)?
    public private(set) var isConnected = false
    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private var subscription: Unmanaged<Callback>?
    /// SHA-1s of the scripts this connection has sent with `SCRIPT LOAD`.
    private var loadedScripts: Set<String> = []
    private let loop: EventLoop

    /// A reply callback; the unmanaged box is the hiredis `privdata`.
    final class Callback {
        let run: (RedisReply?) -> Void
        let once: Bool
        init(once: Bool, _ run: @escaping (RedisReply?) -> Void) { self.run = run; self.once = once }
    }

    /// Starts connecting to `host:port`; failures arrive through `onDisconnect`.
    public init(loop: EventLoop, host: String, port: Int) throws(UVError) {
        guard let context = redisAsyncConnect(host, Int32(port)) else { throw UVError(UV_ENOMEM.rawValue, "redisAsyncConnect") }
        guard context.pointee.err == 0 else {
            let message = context.pointee.errstr.map { String(cString: $0) } ?? "unknown error"
            redisAsyncFree(context)
            throw UVError(UV_ECONNREFUSED.rawValue, "redisAsyncConnect: \(message)")
        }
        self.loop = loop
        guard mockchat_redis_attach(context, loop.uv, Unmanaged.passUnretained(self).toOpaque()) == REDIS_OK else {
            redisAsyncFree(context)
            throw UVError(UV_ENOMEM.rawValue, "attaching the Redis connection to the loop")
        }
        self.context = context
        context.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        redisAsyncSetConnectCallback(context) { context, status in
            guard let context, let owner = context.pointee.data else { return }
            let connection = Unmanaged<RedisConnection>.fromOpaque(owner).takeUnretainedValue()
            if status == REDIS_OK, RedisConnection.isJoinedToItself(context.pointee.c.fd) {
                connection.endOnNextTurn(
                    "connected to itself: nothing listens on the port, which the kernel gave the connection as its own")
            } else if status == REDIS_OK {
                connection.isConnected = true
                connection.onConnect?()
            } else {
                connection.ended(RedisConnection.errorText(context))
            }
        }
        redisAsyncSetDisconnectCallback(context) { context, status in
            guard let context, let owner = context.pointee.data else { return }
            let connection = Unmanaged<RedisConnection>.fromOpaque(owner).takeUnretainedValue()
            connection.ended(status == REDIS_OK ? "disconnected" : RedisConnection.errorText(context))
        }
    }

    deinit {
        close()
        subscription?.release()
    }

    /// Sends one command (arguments as binary-safe strings); `reply` gets nil if the
    /// connection ends first.
    ///
    /// The command is written to the socket at once rather than when the loop next
    /// polls: what a caller does after sending (a login reply, a close frame) then
    /// reaches its peer after Redis has the command, so a client that acts on it through
    /// another connection to Redis is ordered after it.
    public func send(_ arguments: [String], reply: @escaping (RedisReply?) -> Void = { _ in }) {
        guard let context else { return reply(nil) }
        let box = Unmanaged.passRetained(Callback(once: true, reply))
        if issue(context, arguments, box) != REDIS_OK {
            box.release()
            return reply(nil)
        }
        if isConnected { redisAsyncHandleWrite(context) }
    }

    /// Runs a Lua script (`EVALSHA`, no keys) with `arguments`. The script's source
    /// goes once per connection, with `SCRIPT LOAD` sent ahead of its first use, so each
    /// call carries only the SHA-1 and the arguments: Redis reads at most 16 KiB from a
    /// connection per turn of its loop, and small commands keep a burst within that.
    public func evaluate(_ script: RedisScript, _ arguments: [String], reply: @escaping (RedisReply?) -> Void = { _ in }) {
        if loadedScripts.insert(script.sha1).inserted { send(["SCRIPT", "LOAD", script.source]) }
        send(["EVALSHA", script.sha1, "0"] + arguments, reply: reply)
    }

    /// Subscribes to `channel`: `onSubscribed` runs once Redis confirms, then every
    /// message's payload goes to `onMessage`.
    public func subscribe(_ channel: String, onSubscribed: @escaping () -> Void, onMessage: @escaping (String) -> Void) {
        guard let context, subscription == nil else { return }
        let box = Unmanaged.passRetained(Callback(once: false) { reply in
            let parts = reply?.elements ?? []
            if parts.count == 3, parts[0].text == "message", let payload = parts[2].text { onMessage(payload) }
            if parts.count == 3, parts[0].text == "subscribe" { onSubscribed() }
        })
        subscription = box
        _ = issue(context, ["SUBSCRIBE", channel], box)
    }

    /// True until the connection has ended and hiredis has let go of its libuv handle.
    public var isOpen: Bool { context != nil }

    /// Closes the connection; `onDisconnect` is not called. With `flush`, commands
    /// already sent get their replies first (watch ``isOpen``); without, pending replies
    /// get nil at once.
    public func close(flush: Bool = false) {
        guard let context else { return }
        onDisconnect = nil
        if flush && isConnected {
            redisAsyncDisconnect(context)
            return
        }
        self.context = nil
        context.pointee.data = nil
        isConnected = false
        redisAsyncFree(context)
    }

    /// ``EventLoop/shutdown()`` found the connection's handle open: closed at once.
    func closeForShutdown() { close() }

    private func ended(_ reason: String) {
        guard context != nil else { return }
        // hiredis frees the context itself after this callback.
        context?.pointee.data = nil
        context = nil
        isConnected = false
        onDisconnect?(reason)
        onDisconnect = nil
    }

    /// Ends the connection before the loop next polls, so that hiredis, which goes on
    /// after the connect callback, never reads what it wrote to itself as a reply.
    private func endOnNextTurn(_ reason: String) {
        loop.deferToLoop { [weak self] in
            guard let self, context != nil else { return }
            let handler = onDisconnect
            close()
            handler?(reason)
        }
    }

    /// True when the socket's local and peer addresses are the same (TCP's simultaneous
    /// open of a socket with itself).
    static func isJoinedToItself(_ fd: Int32) -> Bool {
        let local = address(of: fd, getsockname)
        return local != nil && local == address(of: fd, getpeername)
    }

    private typealias NameReader = (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32

    private static func address(of fd: Int32, _ read: NameReader) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { read(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        return withUnsafePointer(to: &storage) { SocketAddress($0) }
    }

    private func issue(_ context: UnsafeMutablePointer<redisAsyncContext>, _ arguments: [String],
                       _ box: Unmanaged<Callback>) -> Int32 {
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        let copies = arguments.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        for (copy, argument) in zip(copies, arguments) {
            pointers.append(UnsafePointer(copy))
            lengths.append(argument.utf8.count)
        }
        return redisAsyncCommandArgv(context, { _, reply, privdata in
            guard let privdata else { return }
            let box = Unmanaged<Callback>.fromOpaque(privdata)
            let callback = box.takeUnretainedValue()
            let value = reply.map { RedisReply($0.assumingMemoryBound(to: redisReply.self)) }
            if callback.once { box.release() }
            callback.run(value)
        }, box.toOpaque(), Int32(arguments.count), &pointers, lengths)
    }

    private static func errorText(_ context: UnsafePointer<redisAsyncContext>) -> String {
        context.pointee.errstr.map { String(cString: $0) } ?? "unknown error"
    }
}
