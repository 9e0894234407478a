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
-- Time is Redis's own (TIME, µs), read only if an algorithm needs it. Every
-- number stays below 2^53, and numbers are written with string.format('%d')
-- because tostring keeps 14 digits. Denied requests change nothing.
-- store/memstore mirrors this arithmetic. The engine allocates no table or
-- closure per limit: on this path Lua allocation costs as much as a command.

local mode = ARGV[2]
if mode == 'reset' then
  for i = 1, #KEYS do
    redis.call('DEL', KEYS[i])
  end
  return {}
end

local cost = tonumber(ARGV[1])
local charge = mode == 'take' and cost > 0

-- Redis's clock in µs, read once.
local now
local function clock()
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return now
end

-- An algorithm decides one limit and writes nothing. It returns, as things
-- stand: allowed, remaining, reset µs, retry µs, flags; and when charge is
-- set and it admits: remaining and reset after the charge, and the write to
-- make: 'incr' (INCRBY cost) or 'set' (SET value PX ttl), value, ttl in ms.
local algorithms = {}

function algorithms.fixed(key, quota, window_ms)
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
  if count + cost > quota then
    if cost > quota then return false, remaining, reset, 0, 1 end
    return false, remaining, reset, ttl * 1000, 0
  end
  if not charge then return true, remaining, reset, 0, 0 end
  if live then
    return true, remaining, reset, 0, 0, remaining - cost, ttl * 1000, 'incr'
  end
  return true, remaining, reset, 0, 0, remaining - cost, ttl * 1000, 'set', ARGV[1], window_ms
end

function algorithms.gcra(key, interval, burst)
  local now = clock()
  local offset = interval * burst
  local tat = now
  local stored = tonumber(redis.call('GET', key))
  if stored and stored > now then tat = stored end
  local remaining = math.max(math.floor((now - tat + offset) / interval), 0)
  local reset = tat - now
  if cost > burst then return false, remaining, reset, 0, 1 end
  local new_tat = tat + interval * cost
  local diff = now - (new_tat - offset)
  if diff < 0 then return false, remaining, reset, -diff, 0 end
  if not charge then return true, remaining, reset, 0, 0 end
  return true, remaining, reset, 0, 0, math.floor(diff / interval), new_tat - now,
    'set', string.format('%d', new_tat), math.ceil((new_tat - now) / 1000)
end

-- check phase: decide every limit, write nothing
local reply, writes, all = {}, {}, true
for i = 1, #KEYS do
  local a = 3 * i
  local algorithm = algorithms[ARGV[a]]
  if not algorithm then
    return redis.error_reply('ratekit: unknown algorithm ' .. tostring(ARGV[a]))
  end
  local ok, remaining, reset, retry, flags, after_remaining, after_reset, op, value, ttl =
    algorithm(KEYS[i], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]))
  local o = 5 * (i - 1)
  reply[o + 1] = ok and 1 or 0
  reply[o + 2] = remaining
  reply[o + 3] = reset
  reply[o + 4] = retry
  reply[o + 5] = flags
  writes[o + 1], writes[o + 2], writes[o + 3], writes[o + 4], writes[o + 5] = op, value, ttl, after_remaining, after_reset
  all = all and ok
end

-- commit phase: charge every limit, or none
if all and charge then
  for i = 1, #KEYS do
    local o = 5 * (i - 1)
    local op = writes[o + 1]
    if op == 'incr' then
      redis.call('INCRBY', KEYS[i], ARGV[1])
    elseif op == 'set' then
      redis.call('SET', KEYS[i], writes[o + 2], 'PX', string.format('%d', writes[o + 3]))
    end
    if op then
      reply[o + 2], reply[o + 3] = writes[o + 4], writes[o + 5]
    end
  end
end
return reply
