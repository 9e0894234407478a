-- inflight: requests in flight. p1 slots, p2 lease ms. Redis keeps a sorted
-- set of leases, score their expiry µs, with a TTL of one lease from the
-- last one taken or renewed, or longer: the key lives as long as its
-- longest lease, whatever lease (numbers) each was taken under. A call that
-- takes (cost > 0) or reserves is admitted while fewer than slots leases
-- live, and takes one slot whatever its cost. A denial's retry is 1 s: no one
-- can tell when a request ends.

local function check(r, key, slots, lease_ms)
  local now = clock()
  local live = redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
  local remaining = math.max(slots - live, 0)
  r.allowed, r.remaining, r.reset, r.retry, r.flags = true, remaining, 0, 0, 0
  if (cost > 0 or lease) and live >= slots then
    r.allowed, r.retry = false, 1000000
    return r
  end
  if charge or lease then
    r.after_remaining, r.after_reset, r.delay, r.after_window = remaining - 1, 0, 0, 0
    r.op, r.a, r.b = 'lease', now, lease_ms
  end
  return r
end

-- extend sets the TTL of the key at key to ms unless it is longer (a new
-- key has none: PTTL -1)
local function extend(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, int(ms)) end
end

function writes.lease(key, r) -- the lease at a µs for b ms; expired leases go
  redis.call('ZREMRANGEBYSCORE', key, '-inf', int(r.a))
  redis.call('ZADD', key, int(r.a + r.b * 1000), lease or ('t' .. int(r.a)))
  extend(key, r.b)
end

local function settle(key, slots, lease_ms, _, was, to, e, held)
  if lease then redis.call('ZREM', key, lease) end
  return e, held
end

-- renew returns 1 when the call's lease is held, 0 when it lapsed (and may
-- be another request's slot).
local function renew(key, slots, lease_ms)
  local now = clock()
  local score = lease and redis.call('ZSCORE', key, lease)
  if score and tonumber(score) > now then
    redis.call('ZADD', key, 'XX', int(now + lease_ms * 1000), lease)
    extend(key, lease_ms)
    return 1
  end
  return 0
end

algorithms.inflight = { decide = check, settle = settle, renew = renew }
