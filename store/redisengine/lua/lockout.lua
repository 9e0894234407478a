-- ratekit lockout: counts attempts against several windows at once, each
-- with its own block, in one atomic call.
--
-- KEYS[1]    the attempt log: a sorted set, score µs, member "<µs>:<n>"
-- KEYS[1+i]  the block key of window i (its TTL is the truth)
-- ARGV[1]    op: "check", "attempt", "refund" or "reset"
-- ARGV[2]    "1": attempts during a block are recorded and restart it
-- ARGV[3]    refund: the member of the attempt to remove
-- ARGV[3i+1], ARGV[3i+2], ARGV[3i+3]  window i: attempts, window ms, block ms
--
-- Reply: allowed (1/0), index of the window whose block denies (0: none),
-- when denied the time until an attempt would pass in µs (the longest block
-- left, or longer while a window would still be full then), the recorded
-- attempt's µs and n (0 0 when none), then the count of each window.
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
if op == 'refund' then
  redis.call('ZREM', KEYS[1], ARGV[3])
  return {}
end

local extend = ARGV[2] == '1'
local n = (#ARGV - 3) / 3
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local log = KEYS[1]

local longest, cap = 0, 0
for i = 1, n do
  longest = math.max(longest, tonumber(ARGV[3 * i + 2]))
  cap = math.max(cap, tonumber(ARGV[3 * i + 1]) + 1)
end

local function count(i)
  return redis.call('ZCOUNT', log, '(' .. string.format('%d', now - tonumber(ARGV[3 * i + 2]) * 1000), '+inf')
end

local seq = 0
local function record()
  redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%d', now - longest * 1000))
  local at = string.format('%d', now)
  seq = redis.call('ZCOUNT', log, at, at) + 1
  redis.call('ZADD', log, at, at .. ':' .. string.format('%d', seq))
  redis.call('ZREMRANGEBYRANK', log, 0, -(cap + 1))
  redis.call('PEXPIRE', log, string.format('%d', longest))
end

-- trip starts the block of every window the log has taken past its
-- allowance, and returns the window that denies and its longest block in
-- force; a block that cannot be written (out of memory) denies all the same,
-- and its retry is left to the log (room)
local function trip(scope, left)
  for i = 1, n do
    local block = tonumber(ARGV[3 * i + 3])
    if count(i) > tonumber(ARGV[3 * i + 1]) then
      local set = redis.pcall('SET', KEYS[1 + i], '1', 'PX', string.format('%d', block))
      if type(set) == 'table' and set.err then block = 0 end
      if scope == 0 or block > left then scope, left = i, block end
    end
  end
  return scope, left
end

-- room returns, in µs, how long until every window has room for one more
-- attempt: until the entry that fills a window to its allowance leaves it
local function room()
  local wait = 0
  for i = 1, n do
    local allow = tonumber(ARGV[3 * i + 1])
    local from = now - tonumber(ARGV[3 * i + 2]) * 1000
    local c = count(i)
    if c >= allow then
      local e = redis.call('ZRANGEBYSCORE', log, '(' .. string.format('%d', from), '+inf', 'WITHSCORES', 'LIMIT', c - allow, 1)
      wait = math.max(wait, tonumber(e[2]) - from)
    end
  end
  return wait
end

local function reply(allowed, scope, left)
  local retry = 0
  if allowed == 0 then retry = math.max(left * 1000, room()) end
  local out = { allowed, scope, retry, 0, seq }
  if seq > 0 then out[4] = now end
  for i = 1, n do out[5 + i] = count(i) end
  return out
end

-- the block first; TOUCH keeps a block that is asked about, and the log,
-- from looking idle to eviction by LRU or LFU (PTTL does not)
local scope, left = 0, 0
for i = 1, n do
  local pttl = redis.call('PTTL', KEYS[1 + i])
  if pttl > left then scope, left = i, pttl end
end
if scope > 0 then redis.call('TOUCH', log, KEYS[1 + scope]) end
if scope > 0 then
  if op == 'attempt' and extend then
    record()
    left = tonumber(ARGV[3 * scope + 3])
    redis.call('SET', KEYS[1 + scope], '1', 'PX', string.format('%d', left))
    scope, left = trip(scope, left)
  end
  return reply(0, scope, left)
end
if op ~= 'attempt' then
  return reply(1, 0, 0)
end
record()
scope, left = trip(0, 0)
return reply(scope > 0 and 0 or 1, scope, left)
