-- fixed: a fixed window. p1 quota, p2 window ms. Redis keeps a counter per
-- subject whose TTL, set when the window starts, ends the window (a key lives
-- through the millisecond its PTTL reads 0). A call is admitted when count +
-- cost <= quota; remaining is quota - count, reset and retry the PTTL.

-- check: the window read (GET, PTTL) and decided, nothing written.
local function check(r, key, quota, window_ms)
  local count, ttl, live = 0, window_ms, false
  local stored = redis.call('GET', key)
  if stored then
    local pttl = redis.call('PTTL', key)
    if pttl > 0 then
      count, ttl, live = tonumber(stored) or 0, pttl, true
    end
  end
  local remaining, reset = math.max(quota - count, 0), 0
  if count > 0 then reset = ttl * 1000 end
  r.allowed, r.remaining, r.reset = true, remaining, reset
  if count + cost > quota then
    r.allowed, r.retry, r.flags = false, ttl * 1000, 0
    if cost > quota then r.retry, r.flags = 0, 1 end
    return r
  end
  if charge then
    r.after_remaining, r.after_reset, r.delay, r.after_window = remaining - cost, ttl * 1000, 0, 0
    if live then
      r.op = 'incr'
    else
      r.op, r.a, r.b = 'set', ARGV[1], window_ms
    end
  end
  return r
end


-- take: the charge written first (INCRBY), taken back at once on a denial;
-- an admission's undo is DEL for a window the call began, else DECRBY. A
-- failed INCRBY (out of memory) leaves the decision to check.
local function take(r, key, quota, window_ms)
  if cost > quota then return check(r, key, quota, window_ms) end
  if over[key] then
    if not check(r, key, quota, window_ms).allowed then return r end
    over[key], r.op = nil, false
  end
  local count = redis.pcall('INCRBY', key, ARGV[1])
  if type(count) ~= 'number' then
    if check(r, key, quota, window_ms).allowed then error(count) end -- the admission needs the write
    return r
  end
  if count == cost then -- a new window
    redis.call('PEXPIRE', key, window_ms)
    r.allowed, r.remaining, r.reset, r.undo = true, quota - count, window_ms * 1000, 'del'
    return r
  end
  local ttl = redis.call('PTTL', key)
  if ttl <= 0 then
    -- the window has ended, or a counter has no TTL: a new window
    redis.call('SET', key, ARGV[1], 'PX', window_ms)
    r.allowed, r.remaining, r.reset, r.undo = true, quota - cost, window_ms * 1000, 'del'
    return r
  end
  if count > quota then
    redis.call('DECRBY', key, ARGV[1])
    mark_over(key)
    r.allowed, r.remaining, r.reset = false, math.max(quota - count + cost, 0), ttl * 1000
    r.retry, r.flags = ttl * 1000, 0
    return r
  end
  r.allowed, r.remaining, r.reset, r.undo = true, quota - count, ttl * 1000, 'decr'
  return r
end

-- same_window reports whether the live window, pttl ms from now, is the
-- charged one, which ends at e: whether their ends, in whole ms, are within
-- half a window (sameWindow in internal/algo/fixed.go). A receipt's e is
-- the call's time plus the PTTL it read (µs): its ms is the window's end.
local function same_window(pttl, e, window_ms)
  return math.abs((math.floor(clock() / 1000) + pttl - math.floor(e / 1000)) * 1000) < window_ms * 500
end

-- settle: the charged window is the key's while its end is within half a
-- window of e. A give-back comes off its count (an emptied window is
-- deleted); an extra charge goes to it while it lives, else to a new window.
local function settle(key, quota, window_ms, _, was, to, e, held)
  local give, extra
  give, extra, held = moves(was, to, quota, held)
  if give > 0 then
    local pttl = redis.call('PTTL', key)
    if pttl > 0 and same_window(pttl, e, window_ms) then
      give_back(key, give)
    end
  elseif extra > 0 then
    local pttl = redis.call('PTTL', key)
    local now = clock()
    if pttl > 0 then
      redis.call('INCRBY', key, extra)
      if not same_window(pttl, e, window_ms) then held = 0 end
      e, held = now + pttl * 1000, held + extra
    else
      redis.call('SET', key, extra, 'PX', window_ms)
      e, held = now + window_ms * 1000, extra
    end
  end
  return e, held
end

algorithms.fixed = { decide = check, take = take, settle = settle }
