-- log: a sliding log. p1 quota, p2 window ms. Redis keeps a sorted set of
-- the admitted requests, score their time µs, member "<µs>:<n>" (n counts the
-- requests of that µs from 1), with the window as TTL. A call is admitted
-- when the entries in (now - window, now] plus cost are at most quota.

local function check(r, key, quota, window_ms)
  local now = clock()
  local from = now - window_ms * 1000
  local count = redis.call('ZCOUNT', key, '(' .. int(from), '+inf')
  local reset, window = 0, 0
  if count > 0 then
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    reset = tonumber(newest[2]) + window_ms * 1000 - now
    -- the effective window: until the oldest entry in the window leaves
    local oldest = redis.call('ZRANGEBYSCORE', key, '(' .. int(from), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    window = tonumber(oldest[2]) + window_ms * 1000 - now
  end
  local remaining = math.max(quota - count, 0)
  r.allowed, r.remaining, r.reset, r.retry, r.flags, r.window = false, remaining, reset, 0, 0, window
  if count + cost > quota then
    if cost > quota then r.flags = 1 return r end
    -- the (count + cost - quota)-th oldest entry in the window must leave
    local k = count + cost - quota
    local gone = redis.call('ZCOUNT', key, '-inf', int(from))
    local e = redis.call('ZRANGE', key, gone + k - 1, gone + k - 1, 'WITHSCORES')
    r.retry = tonumber(e[2]) + window_ms * 1000 - now
    return r
  end
  r.allowed = true
  if not charge then return r end
  r.after_remaining, r.after_reset, r.delay, r.after_window = remaining - cost, window_ms * 1000, 0, window
  if count == 0 then r.after_window = window_ms * 1000 end
  r.op, r.a, r.b, r.c = 'zadd', now, window_ms, from
  return r
end

-- add trims a log to the window after from (µs), adds n entries at time at
-- (µs), numbered after those of that time, and sets the log's TTL.
local function add(key, at, n, window_ms, from)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', int(from))
  local seq = redis.call('ZCOUNT', key, int(at), int(at))
  local args = {}
  for j = 1, n do
    args[#args + 1] = int(at)
    args[#args + 1] = int(at) .. ':' .. int(seq + j)
    if #args >= 2000 then
      redis.call('ZADD', key, unpack(args))
      args = {}
    end
  end
  if #args > 0 then redis.call('ZADD', key, unpack(args)) end
  redis.call('PEXPIRE', key, int(window_ms))
end

-- drop removes up to n entries at time at (µs), the highest numbered, so
-- that the members at that time stay at:1 .. at:k.
local function drop(key, at, n)
  local k = redis.call('ZCOUNT', key, int(at), int(at))
  local names = {}
  for j = k, math.max(k - n + 1, 1), -1 do
    names[#names + 1] = int(at) .. ':' .. int(j)
    if #names >= 2000 then
      redis.call('ZREM', key, unpack(names))
      names = {}
    end
  end
  if #names > 0 then redis.call('ZREM', key, unpack(names)) end
end

function writes.zadd(key, r) -- cost entries at a µs, window b ms, trimmed to after c µs
  add(key, r.a, cost, r.b, r.c)
end

-- settle: the charge's entries are those at e; a give-back drops them while
-- they are in the window, an extra charge moves what is left of them to now.
local function settle(key, quota, window_ms, _, was, to, e, held)
  local give, extra
  give, extra, held = moves(was, to, quota, held)
  if give > 0 then
    if e > clock() - window_ms * 1000 then drop(key, e, give) end
  elseif extra > 0 then
    local now = clock()
    local start = now - window_ms * 1000
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(start))
    local moved = 0
    if e > start then
      moved = math.min(held, redis.call('ZCOUNT', key, int(e), int(e)))
      drop(key, e, moved)
    end
    add(key, now, moved + extra, window_ms, start)
    e, held = now, moved + extra
  end
  return e, held
end

algorithms.log = { decide = check, settle = settle }
