-- ratekit engine: decides every limit of one subject in one atomic call.
--
-- KEYS[i]  state key of limit i (all keys of one call share one hash tag)
-- ARGV[1]  cost: integer, 0 .. 2^53-1
-- ARGV[2]  mode: "take" (charge if every limit admits), "peek" (never
--          charge) or "reset" (delete every key)
-- ARGV[3*i], ARGV[3*i+1], ARGV[3*i+2]  limit i: algorithm, p1, p2
--          fixed: quota, window in ms      gcra: interval in µs, burst
--
-- Reply: 5 integers per limit, in KEYS order: allowed (1/0), remaining,
-- reset in µs, retry-after in µs, flags (1 = the cost can never pass).
--
-- Time is Redis's own (TIME, µs). Every number stays below 2^53, and numbers
-- are written with string.format('%d') because tostring keeps 14 digits.
-- Denied requests change nothing. store/memstore mirrors this arithmetic.

local mode = ARGV[2]
if mode == 'reset' then
  for i = 1, #KEYS do
    redis.call('DEL', KEYS[i])
  end
  return {}
end

local cost = tonumber(ARGV[1])
local charge = mode == 'take' and cost > 0
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function int(x)
  return string.format('%d', x)
end

-- Each algorithm returns a table r: allowed, remaining, reset, retry, unsat
-- as things stand; and when charge is set and the limit admits: after_remaining,
-- after_reset and commit, a function that writes the new state.
local algorithms = {}

function algorithms.fixed(key, quota, window_ms)
  local count, ttl = 0, window_ms
  local pttl = redis.call('PTTL', key)
  if pttl > 0 then
    count = tonumber(redis.call('GET', key)) or 0
    ttl = pttl
  end
  local r = { allowed = count + cost <= quota, retry = 0, unsat = false }
  r.remaining = math.max(quota - count, 0)
  r.reset = 0
  if count > 0 then r.reset = ttl * 1000 end
  if not r.allowed then
    if cost > quota then r.unsat = true else r.retry = ttl * 1000 end
  elseif charge then
    r.after_remaining = math.max(quota - count - cost, 0)
    r.after_reset = ttl * 1000
    if pttl > 0 then
      r.commit = function() redis.call('INCRBY', key, ARGV[1]) end
    else
      r.commit = function() redis.call('SET', key, ARGV[1], 'PX', int(window_ms)) end
    end
  end
  return r
end

function algorithms.gcra(key, interval, burst)
  local offset = interval * burst
  local tat = now
  local stored = tonumber(redis.call('GET', key))
  if stored and stored > now then tat = stored end
  local r = { allowed = false, retry = 0, unsat = false }
  r.remaining = math.max(math.floor((now - tat + offset) / interval), 0)
  r.reset = tat - now
  if cost > burst then
    r.unsat = true
    return r
  end
  local new_tat = tat + interval * cost
  local diff = now - (new_tat - offset)
  if diff < 0 then
    r.retry = -diff
    return r
  end
  r.allowed = true
  if charge then
    r.after_remaining = math.floor(diff / interval)
    r.after_reset = new_tat - now
    r.commit = function()
      redis.call('SET', key, int(new_tat), 'PX', int(math.ceil((new_tat - now) / 1000)))
    end
  end
  return r
end

-- check phase: decide every limit, write nothing
local results = {}
local all = true
for i = 1, #KEYS do
  local a = 3 * i
  local algorithm = algorithms[ARGV[a]]
  if not algorithm then
    return redis.error_reply('ratekit: unknown algorithm ' .. tostring(ARGV[a]))
  end
  local r = algorithm(KEYS[i], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]))
  results[i] = r
  all = all and r.allowed
end

-- commit phase: charge every limit, or none
local reply = {}
for i = 1, #KEYS do
  local r = results[i]
  local remaining, reset = r.remaining, r.reset
  if all and r.commit then
    r.commit()
    remaining, reset = r.after_remaining, r.after_reset
  end
  local flags = 0
  if r.unsat then flags = 1 end
  local allowed = 0
  if r.allowed then allowed = 1 end
  local o = 5 * (i - 1)
  reply[o + 1] = allowed
  reply[o + 2] = remaining
  reply[o + 3] = reset
  reply[o + 4] = r.retry
  reply[o + 5] = flags
end
return reply
