-- ratekit lockout: counts attempts against several windows at once, each
-- with its own block, in one atomic call.
--
-- KEYS[1]    the attempt log: a sorted set, score µs, member "<µs>:<n>"
-- KEYS[1+i]  the block key of window i (its TTL is the truth)
-- ARGV[1]    op: "check", "attempt" or "reset"
-- ARGV[2]    "1": attempts during a block are recorded and restart it
-- ARGV[3i], ARGV[3i+1], ARGV[3i+2]  window i: attempts, window ms, block ms
--
-- Reply: allowed (1/0), index of the window whose block denies (0: none),
-- its remaining block in µs, then the count of each window.
--
-- The block is checked first: a blocked subject stays blocked for the whole
-- block, even after its windows drain. The log never holds more than the
-- largest allowance + 1 entries, so a flood cannot grow it.

local op = ARGV[1]
if op == 'reset' then
  for i = 1, #KEYS do
    redis.call('DEL', KEYS[i])
  end
  return {}
end

local extend = ARGV[2] == '1'
local n = (#ARGV - 2) / 3
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local log = KEYS[1]

local longest, cap = 0, 0
for i = 1, n do
  longest = math.max(longest, tonumber(ARGV[3 * i + 1]))
  cap = math.max(cap, tonumber(ARGV[3 * i]) + 1)
end

local function reply(allowed, scope, retry_us)
  local out = { allowed, scope, retry_us }
  for i = 1, n do
    out[3 + i] = redis.call('ZCOUNT', log, '(' .. string.format('%d', now - tonumber(ARGV[3 * i + 1]) * 1000), '+inf')
  end
  return out
end

local function record()
  redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%d', now - longest * 1000))
  local at = string.format('%d', now)
  local seq = redis.call('ZCOUNT', log, at, at)
  redis.call('ZADD', log, at, at .. ':' .. string.format('%d', seq + 1))
  redis.call('ZREMRANGEBYRANK', log, 0, -(cap + 1))
  redis.call('PEXPIRE', log, string.format('%d', longest))
end

-- the block first
local scope, left = 0, 0
for i = 1, n do
  local pttl = redis.call('PTTL', KEYS[1 + i])
  if pttl > left then scope, left = i, pttl end
end
if scope > 0 then
  if op == 'attempt' and extend then
    record()
    left = tonumber(ARGV[3 * scope + 2])
    redis.call('SET', KEYS[1 + scope], '1', 'PX', string.format('%d', left))
  end
  return reply(0, scope, left * 1000)
end
if op == 'check' then
  return reply(1, 0, 0)
end

record()
for i = 1, n do
  local count = redis.call('ZCOUNT', log, '(' .. string.format('%d', now - tonumber(ARGV[3 * i + 1]) * 1000), '+inf')
  local block = tonumber(ARGV[3 * i + 2])
  if count > tonumber(ARGV[3 * i]) then
    redis.call('SET', KEYS[1 + i], '1', 'PX', string.format('%d', block))
    if block > left then scope, left = i, block end
  end
end
if scope > 0 then
  return reply(0, scope, left * 1000)
end
return reply(1, 0, 0)
