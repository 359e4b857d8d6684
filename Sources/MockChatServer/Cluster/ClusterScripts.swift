import EventLoop

/// The Lua scripts the cluster bridge runs in Redis. Each runs atomically, so a change
/// and the message announcing it are one step: a device is announced only by the
/// script that stored it, and retracted only by the script that removed it.
///
/// Every message carries `seq`, the value of the counter `mockchat:seq` that the
/// publishing script incremented. Redis runs scripts one at a time, so `seq` follows
/// the channel's order, and a snapshot returned with the counter's value says exactly
/// which messages it already contains (``ClusterSync``).
/// Keys and channel: docs/CLUSTER.md.
package enum ClusterScripts {
    /// `publish(json)`: numbers the JSON object `json` with the next `seq` and publishes it.
    private static let publish = """
        local function publish(message)
          local seq = redis.call('INCR', 'mockchat:seq')
          redis.call('PUBLISH', 'mockchat:events', '{"seq":' .. seq .. ',' .. string.sub(message, 2))
        end
        """

    /// `drop(uid, field, now)`: removes one device, publishing its `remove`.
    private static let drop = """
        local function drop(uid, field, now)
          local key = 'mockchat:devices:' .. uid
          if redis.call('HDEL', key, field) == 0 then return 0 end
          if redis.call('HLEN', key) == 0 then
            redis.call('SREM', 'mockchat:users', uid)
            redis.call('HSET', 'mockchat:lastActiveAt', uid, now)
          end
          publish(cjson.encode({t = 'remove', uid = uid, field = field, lastActiveAt = tonumber(now)}))
          return 1
        end
        """

    /// `store(uid, field, device, message)`: stores one device, publishing `message` if it is new.
    private static let store = """
        local function store(uid, field, device, message)
          if redis.call('HSET', 'mockchat:devices:' .. uid, field, device) == 1 then
            redis.call('SADD', 'mockchat:users', uid)
            publish(message)
          end
        end
        """

    /// ARGV: uid, field, device JSON, add message, deviceId, platform, mobile limit,
    /// refuse (`1`: refuse rather than kick), now. The device policy for the whole
    /// cluster, decided in one step by ``DevicePolicy/lua`` over the user's other
    /// devices, oldest first (`older`, the holders' `<`). When refused, stores
    /// nothing and returns 0; otherwise stores and announces the device, then kicks and
    /// removes each displaced one, and returns them: `{field, reason, ...}`.
    /// The ARGV of ``claim`` for `device`'s login under `claim`, announced with
    /// `message`, at `now` (Unix seconds).
    package static func claimArguments(_ device: ClusterDevice, _ claim: DeviceClaim, message: String,
                                       now: Double) -> [String] {
        [device.uid, device.field, ClusterEvent.storedValue(device), message, device.deviceId,
         device.platform.rawValue, String(claim.mobileLimit), claim.refusesToKick ? "1" : "0", String(now)]
    }

    package static let claim = RedisScript(publish + "\n" + drop + "\n" + store + "\n" + DevicePolicy.lua + "\n" + """
        local uid, field, deviceId, platform = ARGV[1], ARGV[2], ARGV[5], ARGV[6]
        local entries = redis.call('HGETALL', 'mockchat:devices:' .. uid)
        local others = {}
        for i = 1, #entries, 2 do
          if entries[i] ~= field then
            local other = cjson.decode(entries[i + 1])
            others[#others + 1] = {id = entries[i], deviceId = other.deviceId, platform = other.platform, since = other.since}
          end
        end
        table.sort(others, older)
        local displaced = decide(others, deviceId, platform, tonumber(ARGV[7]), ARGV[8] == '1')
        if not displaced then return 0 end
        store(uid, field, ARGV[3], ARGV[4])
        local reply = {}
        for _, old in ipairs(displaced) do
          local slash = string.find(old[1], '/', 1, true)
          publish(cjson.encode({t = 'kick', node = string.sub(old[1], 1, slash - 1), conn = string.sub(old[1], slash + 1),
            reason = old[2], byDeviceId = deviceId, byPlatform = platform}))
          drop(uid, old[1], ARGV[9])
          reply[#reply + 1] = old[1]; reply[#reply + 1] = old[2]
        end
        return reply
        """)

    /// ARGV: uid, field, lastActiveAt. Removes the device; publishes if it was there.
    static let remove = RedisScript(publish + "\n" + drop + "\n" + """
        drop(ARGV[1], ARGV[2], ARGV[3])
        return 1
        """)

    /// `dropNode(node, now, keep)`: removes the devices of `node` whose `uid field` is
    /// not in `keep`, with a `remove` each. Used by `rejoin` (this node, its current
    /// devices kept) and `heartbeat` (a dead node, nothing kept).
    private static let dropNode = """
        local function dropNode(node, now, keep)
          local prefix = node .. '/'
          local dropped = 0
          for _, uid in ipairs(redis.call('SMEMBERS', 'mockchat:users')) do
            for _, field in ipairs(redis.call('HKEYS', 'mockchat:devices:' .. uid)) do
              if string.sub(field, 1, #prefix) == prefix and not keep[uid .. ' ' .. field] then
                dropped = dropped + drop(uid, field, now)
              end
            end
          end
          return dropped
        end
        """

    /// `snapshot()`: the counter, then uid, field, device JSON of every device.
    private static let snapshot = """
        local function snapshot()
          local out = {tonumber(redis.call('GET', 'mockchat:seq') or '0')}
          for _, uid in ipairs(redis.call('SMEMBERS', 'mockchat:users')) do
            local entries = redis.call('HGETALL', 'mockchat:devices:' .. uid)
            for i = 1, #entries, 2 do
              out[#out + 1] = uid; out[#out + 1] = entries[i]; out[#out + 1] = entries[i + 1]
            end
          end
          return out
        end
        """

    /// ARGV: node, liveness TTL in ms, lastActiveAt, then uid, field, device JSON, add
    /// message per local device. (Re)registers the node after a (re)connect or an
    /// expired liveness key: renews its liveness key, drops its devices that ended
    /// meanwhile, stores (announcing) the ones Redis lost, and returns a ``snapshot``
    /// taken in the same step, so nothing can happen between the two.
    static let rejoin = RedisScript(publish + "\n" + drop + "\n" + store + "\n" + dropNode + "\n" + snapshot + "\n" + """
        redis.call('SET', 'mockchat:node:' .. ARGV[1], ARGV[3], 'PX', ARGV[2])
        redis.call('SADD', 'mockchat:nodes', ARGV[1])
        local keep = {}
        for i = 4, #ARGV, 4 do keep[ARGV[i] .. ' ' .. ARGV[i + 1]] = true end
        dropNode(ARGV[1], ARGV[3], keep)
        for i = 4, #ARGV, 4 do store(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]) end
        return snapshot()
        """)

    /// ARGV: node, liveness TTL in ms, now. Renews this node's liveness key, then
    /// retracts every device of nodes whose key has expired. Whichever node runs it
    /// first does the work; the others find nothing left. Returns the number of devices
    /// retracted, or -1 when this node's own key had expired: it may have been reaped,
    /// and must rejoin.
    static let heartbeat = RedisScript(publish + "\n" + drop + "\n" + dropNode + "\n" + """
        local key = 'mockchat:node:' .. ARGV[1]
        if redis.call('EXISTS', key) == 0 then return -1 end
        redis.call('SET', key, ARGV[3], 'PX', ARGV[2])
        local reaped = 0
        for _, node in ipairs(redis.call('SMEMBERS', 'mockchat:nodes')) do
          if redis.call('EXISTS', 'mockchat:node:' .. node) == 0 then
            redis.call('SREM', 'mockchat:nodes', node)
            reaped = reaped + dropNode(node, ARGV[3], {})
          end
        end
        return reaped
        """)

    /// ARGV: reset message. Forgets every device and lastActiveAt (not the counter),
    /// then publishes the reset.
    static let reset = RedisScript(publish + "\n" + """
        for _, uid in ipairs(redis.call('SMEMBERS', 'mockchat:users')) do
          redis.call('DEL', 'mockchat:devices:' .. uid)
        end
        redis.call('DEL', 'mockchat:users', 'mockchat:lastActiveAt')
        publish(ARGV[1])
        return 1
        """)
}
