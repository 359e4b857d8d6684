/// The Lua scripts the cluster bridge runs in Redis. Each runs atomically, so a change
/// and the message announcing it are one step: a device is announced only by the
/// script that stored it, and retracted only by the script that removed it.
/// Keys and channel: docs/CLUSTER.md.
enum ClusterScripts {
    /// ARGV: uid, field, device JSON, message. Stores the device; publishes if new.
    static let add = """
        local key = 'mockchat:devices:' .. ARGV[1]
        if redis.call('HSET', key, ARGV[2], ARGV[3]) == 1 then
          redis.call('SADD', 'mockchat:users', ARGV[1])
          redis.call('PUBLISH', 'mockchat:events', ARGV[4])
        end
        return 1
        """

    /// ARGV: uid, field, lastActiveAt, message. Removes the device; publishes if it was there.
    static let remove = """
        local key = 'mockchat:devices:' .. ARGV[1]
        if redis.call('HDEL', key, ARGV[2]) == 1 then
          if redis.call('HLEN', key) == 0 then redis.call('SREM', 'mockchat:users', ARGV[1]) end
          redis.call('HSET', 'mockchat:lastActiveAt', ARGV[1], ARGV[3])
          redis.call('PUBLISH', 'mockchat:events', ARGV[4])
        end
        return 1
        """

    /// Removes, with a `remove` message each, the devices of node ARGV[1] whose
    /// `uid field` is not in ARGV[3...] (pairs); ARGV[2] is lastActiveAt. Used by
    /// `rejoin` (ARGV[1] = this node, its current devices kept) and `reap` (a dead
    /// node, nothing kept).
    private static let dropNode = """
        local function dropNode(node, now, keep)
          local prefix = node .. '/'
          local dropped = 0
          for _, uid in ipairs(redis.call('SMEMBERS', 'mockchat:users')) do
            local key = 'mockchat:devices:' .. uid
            for _, field in ipairs(redis.call('HKEYS', key)) do
              if string.sub(field, 1, #prefix) == prefix and not keep[uid .. ' ' .. field] then
                redis.call('HDEL', key, field)
                redis.call('HSET', 'mockchat:lastActiveAt', uid, now)
                redis.call('PUBLISH', 'mockchat:events', cjson.encode({t = 'remove', uid = uid,
                  field = field, lastActiveAt = tonumber(now)}))
                dropped = dropped + 1
              end
            end
            if redis.call('HLEN', key) == 0 then redis.call('SREM', 'mockchat:users', uid) end
          end
          return dropped
        end
        """

    /// ARGV: node, lastActiveAt, then uid, field, device JSON, add message per local
    /// device. After a reconnect: drops this node's devices that ended meanwhile and
    /// stores (announcing) the ones Redis lost.
    static let rejoin = dropNode + "\n" + """
        local keep = {}
        for i = 3, #ARGV, 4 do keep[ARGV[i] .. ' ' .. ARGV[i + 1]] = true end
        dropNode(ARGV[1], ARGV[2], keep)
        for i = 3, #ARGV, 4 do
          if redis.call('HSET', 'mockchat:devices:' .. ARGV[i], ARGV[i + 1], ARGV[i + 2]) == 1 then
            redis.call('SADD', 'mockchat:users', ARGV[i])
            redis.call('PUBLISH', 'mockchat:events', ARGV[i + 3])
          end
        end
        return 1
        """

    /// ARGV: node, liveness TTL in ms, now. Renews this node's liveness key, then
    /// retracts every device of nodes whose key has expired. Whichever node runs it
    /// first does the work; the others find nothing left.
    static let heartbeat = dropNode + "\n" + """
        redis.call('SET', 'mockchat:node:' .. ARGV[1], ARGV[3], 'PX', ARGV[2])
        redis.call('SADD', 'mockchat:nodes', ARGV[1])
        local reaped = 0
        for _, node in ipairs(redis.call('SMEMBERS', 'mockchat:nodes')) do
          if redis.call('EXISTS', 'mockchat:node:' .. node) == 0 then
            redis.call('SREM', 'mockchat:nodes', node)
            reaped = reaped + dropNode(node, ARGV[3], {})
          end
        end
        return reaped
        """

    /// Every device: uid, field, device JSON, repeated.
    static let snapshot = """
        local out = {}
        for _, uid in ipairs(redis.call('SMEMBERS', 'mockchat:users')) do
          local entries = redis.call('HGETALL', 'mockchat:devices:' .. uid)
          for i = 1, #entries, 2 do
            out[#out + 1] = uid; out[#out + 1] = entries[i]; out[#out + 1] = entries[i + 1]
          end
        end
        return out
        """

    /// ARGV: message. Forgets every device and lastActiveAt, then publishes the reset.
    static let reset = """
        for _, uid in ipairs(redis.call('SMEMBERS', 'mockchat:users')) do
          redis.call('DEL', 'mockchat:devices:' .. uid)
        end
        redis.call('DEL', 'mockchat:users', 'mockchat:lastActiveAt')
        redis.call('PUBLISH', 'mockchat:events', ARGV[1])
        return 1
        """
}
