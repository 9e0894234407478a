-- gcra, token and leaky: the generic cell rate algorithm (as
-- go-redis/redis_rate). p1 interval µs (for one unit to come back), p2
-- burst, p3 max wait µs (0: meter; else queue mode). Redis keeps the
-- theoretical arrival time tat (µs), when the bucket is full again, and the
-- interval it was written under, as "<tat>:<interval>", with a TTL to tat. A call is admitted when tat + interval * (cost - burst) <= now;
-- in queue mode it then waits until max(tat, now), at most max wait. A charge
-- sets tat to max(tat, now) + interval * cost.

-- tat_of returns the tat of a key's value v (nil: none) at now: one
-- written under another interval is read as that many intervals used, at
-- most burst, counted in this one (tatOf in internal/algo/bucket.go); then,
-- for such a value, its own tat and interval, by which it keeps draining.
local function tat_of(v, now, interval, burst)
  if not v then return now end
  local t, u = string.match(v, '^(%d+):(%d+)$')
  t, u = tonumber(t), tonumber(u)
  if not t or t <= now then return now end
  if u ~= interval then return now + math.ceil(math.min((t - now) / u, burst) * interval), t, u end
  return t
end

local function value(tat, interval) return int(tat) .. ':' .. int(interval) end

-- at decides on stored, the key's value (a string or nil).
local function at(r, stored, interval, burst, max_wait)
  local now = clock()
  local offset = interval * burst
  local tat, st, su = tat_of(stored, now, interval, burst)
  r.allowed, r.remaining, r.reset = false, math.max(math.floor((now - tat + offset) / interval), 0), tat - now
  r.retry, r.flags = 0, 0
  if cost > burst then r.flags = 1 return r end
  local new_tat = tat + interval * cost
  local diff = now - (new_tat - offset)
  -- a value of another interval drains by its own (see tat_of): the wait
  -- is until its intervals left are few enough (burst - cost; max_wait's)
  if diff < 0 then
    r.retry = -diff
    if st then r.retry = st - (burst - cost) * su - now end
    return r
  end
  local delay = 0
  if max_wait > 0 then
    delay = tat - now
    if delay > max_wait then
      r.retry = delay - max_wait
      if st then r.retry = st - math.floor(max_wait * su / interval) - now end
      return r
    end
  end
  r.allowed = true
  if not charge then return r end
  r.after_remaining, r.after_reset, r.delay, r.after_window = math.floor(diff / interval), new_tat - now, delay, 0
  r.op, r.a, r.b = 'set', value(new_tat, interval), math.ceil((new_tat - now) / 1000)
  return r
end

local function check(r, key, interval, burst, max_wait)
  return at(r, redis.call('GET', key) or nil, interval, burst, max_wait)
end

-- take: a missing key is a full bucket, which admits any cost up to burst:
-- SET NX GET (Redis 7) writes that charge (undo DEL), or returns the value of
-- a key that exists, decided on as check does; a failed SET (out of memory)
-- leaves the decision to check.
local function take(r, key, interval, burst, max_wait)
  if cost > burst or not redis.REDIS_VERSION_NUM then return check(r, key, interval, burst, max_wait) end
  local now = clock()
  local offset = interval * burst
  local new_tat = now + interval * cost
  local diff = now - (new_tat - offset)
  if diff < 0 then return check(r, key, interval, burst, max_wait) end
  local stored = redis.pcall('SET', key, value(new_tat, interval), 'PX', math.ceil((new_tat - now) / 1000), 'NX', 'GET')
  if type(stored) == 'table' and stored.err then return check(r, key, interval, burst, max_wait) end
  if stored then return at(r, stored, interval, burst, max_wait) end
  r.allowed, r.remaining, r.reset, r.undo = true, math.floor(diff / interval), new_tat - now, 'del'
  return r
end

-- settle: a give-back takes off tat the part of the charge not yet
-- refilled, min(n * interval, e - now), e being the tat the charge made.
local function settle(key, interval, burst, _, was, to, e, held)
  local give, extra
  give, extra, held = moves(was, to, burst, held)
  if give > 0 then
    local now = clock()
    local tat = tat_of(redis.call('GET', key) or nil, now, interval, burst)
    if tat > now then
      local part = math.max(math.min(give * interval, e - now), 0)
      local nt = math.max(tat - part, now)
      e = e - part
      if nt > now then
        redis.call('SET', key, value(nt, interval), 'PX', int(math.ceil((nt - now) / 1000)))
      else
        redis.call('DEL', key)
      end
    end
  elseif extra > 0 then
    local now = clock()
    local tat = tat_of(redis.call('GET', key) or nil, now, interval, burst) + extra * interval
    redis.call('SET', key, value(tat, interval), 'PX', int(math.ceil((tat - now) / 1000)))
    e, held = tat, held + extra
  end
  return e, held
end

local bucket = { decide = check, take = take, settle = settle }
algorithms.gcra, algorithms.token, algorithms.leaky = bucket, bucket, bucket
