-- suppressed (trypema's suppressed strategy, see ratekit.Suppressed): p1
-- soft, p2 hard, p3 window ms. Redis keeps a hash of two counts per bucket
-- (width window/10, or the window): 't<bucket>' every call, 'a<bucket>' the
-- admitted ones, its TTL to the moment the newest bucket leaves the window.
-- Admit when the calls in the window, this one included, are at most soft;
-- decline when the admitted ones would pass hard; else admit when draw /
-- 2^53 < p = (soft / offered) × (soft / admitted), both counted in the
-- window with this call and scaled to a whole window when the oldest call
-- is younger than the window. Every call is counted (always.supp), and the
-- answer is the state after it is counted.

local function check(r, key, soft, hard, window_ms)
  local width = window_ms
  if window_ms % 10 == 0 then width = window_ms / 10 end
  local now_ms = math.floor(clock() / 1000)
  local c = math.floor(now_ms / width)
  local o = c - window_ms / width
  local x = now_ms % width
  local counts, full, full_a, old_a, oldest, newest = {}, 0, 0, 0, nil, nil
  local flat = redis.call('HGETALL', key)
  for j = 1, #flat, 2 do
    local f, v = flat[j], tonumber(flat[j + 1])
    local idx = tonumber(string.sub(f, 2))
    if idx and v and idx >= o and idx <= c and v > 0 then
      if string.byte(f) == 116 then -- 't'
        counts[idx - o] = v
        if idx > o then full = full + v end
        if not oldest or idx < oldest then oldest = idx end
        if not newest or idx > newest then newest = idx end
      elseif idx > o then
        full_a = full_a + v
      else
        old_a = v
      end
    end
  end
  local scaled = full * width + (counts[0] or 0) * (width - x)
  local scaled_a = full_a * width + old_a * (width - x)
  local cw = cost * width
  if cost > hard then
    local reset = 0
    if newest then reset = ((newest + 1) * width + window_ms - now_ms) * 1000 end
    r.allowed, r.remaining, r.reset = false, math.max(math.floor((soft * width - scaled) / width), 0), reset
    r.retry, r.flags, r.factor = 0, 1, false
    return r
  end
  local ok, flags, factor = true, 0, 0
  if scaled_a + cw > hard * width then
    ok, factor = false, 1
  elseif scaled + cw > soft * width then
    local span = now_ms - (oldest or c) * width
    if span < width then
      span = width
    elseif span > window_ms then
      span = window_ms
    end
    -- trypema's soft / offered rate, times soft / admitted rate: a feedback
    -- that pulls the window's admitted count toward soft
    local p = (soft * width * span) / ((scaled + cw) * window_ms)
    p = p * ((soft * width * span) / (math.max(scaled_a + cw, width) * window_ms))
    factor = math.max(0, 1 - p)
    if not draw then error(redis.error_reply('ratekit: suppressed needs a draw in ARGV[n+3]')) end
    if draw / 9007199254740992 >= p then ok, flags = false, 4 end
  end
  if charge then
    counts[c - o] = (counts[c - o] or 0) + cost
    full, scaled, newest = full + cost, scaled + cw, c
  end
  local remaining = math.max(math.floor((soft * width - scaled) / width), 0)
  local reset, retry = 0, 0
  if newest then reset = ((newest + 1) * width + window_ms - now_ms) * 1000 end
  if not ok then
    if cost > soft then
      retry = reset
    else
      retry = slide_retry(counts, full, x, (soft - cost) * width, width, o, window_ms, now_ms)
    end
  end
  r.allowed, r.remaining, r.reset, r.retry, r.flags, r.factor = ok, remaining, reset, retry, flags, factor
  if charge then
    r.after_remaining, r.after_reset, r.delay, r.after_window = remaining, reset, 0, 0
    r.op, r.a, r.b, r.c = 'supp', c, (c + 1) * width + window_ms - now_ms, o
  end
  return r
end

function writes.supp(key, r, admitted) -- the call in bucket a, PEXPIRE b ms, prune buckets before c
  prune(key, r.c, true)
  redis.call('HINCRBY', key, 't' .. int(r.a), ARGV[1])
  if admitted then redis.call('HINCRBY', key, 'a' .. int(r.a), ARGV[1]) end
  redis.call('PEXPIRE', key, int(r.b))
end
always.supp = true

algorithms.suppressed = { decide = check }
