-- sliding: a sliding window estimated from buckets. p1 quota, p2 window ms,
-- p3 bucket width ms (a divisor of the window). Redis keeps a hash of bucket
-- index (ms / width) to count, its TTL to the moment the newest bucket
-- leaves the window. A call is admitted when the estimate (the prelude's
-- bucketed windows) plus cost is at most quota.

local function check(r, key, quota, window_ms, width)
  local now_ms = math.floor(clock() / 1000)
  local c = math.floor(now_ms / width)
  local o = c - window_ms / width
  -- counts is indexed by bucket - o (0 .. window/width): small keys, since
  -- some Lua implementations pad array tables up to the largest index
  local counts, newest, full = {}, nil, 0
  local flat = redis.call('HGETALL', key)
  for j = 1, #flat, 2 do
    local idx, n = tonumber(flat[j]), tonumber(flat[j + 1])
    if idx >= o and idx <= c and n > 0 then
      counts[idx - o] = n
      if idx > o then full = full + n end
      if not newest or idx > newest then newest = idx end
    end
  end
  local x = now_ms % width -- where s lies in bucket o
  local scaled = full * width + (counts[0] or 0) * (width - x)
  local remaining = math.max(math.floor((quota * width - scaled) / width), 0)
  local reset, window = 0, 0
  if newest then reset = ((newest + 1) * width + window_ms - now_ms) * 1000 end
  if scaled > 0 then window = slide_window(counts, full, x, remaining, quota, width, o, c, window_ms, now_ms) end
  r.allowed, r.remaining, r.reset, r.retry, r.flags, r.window = false, remaining, reset, 0, 0, window
  if cost > quota then r.flags = 1 return r end
  local need = (quota - cost) * width
  if scaled > need then
    r.retry = slide_retry(counts, full, x, need, width, o, window_ms, now_ms)
    return r
  end
  r.allowed = true
  if not charge then return r end
  local ttl = (c + 1) * width + window_ms - now_ms
  local after = math.floor((quota * width - scaled - cost * width) / width)
  counts[c - o] = (counts[c - o] or 0) + cost
  r.after_remaining, r.after_reset, r.delay = after, ttl * 1000, 0
  r.after_window = slide_window(counts, full + cost, x, after, quota, width, o, c, window_ms, now_ms)
  r.op, r.a, r.b, r.c = 'hincr', c, ttl, o
  return r
end

function writes.hincr(key, r) -- HINCRBY bucket a by cost, PEXPIRE b ms, prune buckets before c
  prune(key, r.c)
  redis.call('HINCRBY', key, int(r.a), ARGV[1])
  redis.call('PEXPIRE', key, int(r.b))
end

-- settle: a give-back comes off the charge's bucket (e's); an extra charge
-- moves what that bucket still holds of the charge to bucket c, with it.
local function settle(key, quota, window_ms, width, was, to, e, held)
  local give, extra
  give, extra, held = moves(was, to, quota, held)
  if give > 0 then
    local field = int(math.floor(e / 1000 / width))
    local v = tonumber(redis.call('HGET', key, field))
    if v and v > 0 then redis.call('HINCRBY', key, field, -math.min(give, v)) end
  elseif extra > 0 then
    local now = clock()
    local now_ms = math.floor(now / 1000)
    local c = math.floor(now_ms / width)
    prune(key, c - window_ms / width)
    local from = int(math.floor(e / 1000 / width))
    local moved = math.min(held, tonumber(redis.call('HGET', key, from)) or 0)
    if moved > 0 then redis.call('HINCRBY', key, from, -moved) end
    redis.call('HINCRBY', key, int(c), moved + extra)
    redis.call('PEXPIRE', key, int((c + 1) * width + window_ms - now_ms))
    e, held = now, moved + extra
  end
  return e, held
end

algorithms.sliding = { decide = check, settle = settle }
