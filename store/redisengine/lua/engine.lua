-- ratekit engine: decides every limit of one subject in one atomic call.
--
-- KEYS[1..n]  state key of limit i; then one block key for each limit whose
--             block is set, in limit order (all keys share one hash tag)
-- ARGV[1]     cost: integer, 0 .. 2^53-1
-- ARGV[2]     mode: "take" (charge if every limit admits), "reserve" (take,
--             and reply with the charge's time), "peek" (never charge) or
--             "reset" (delete every key)
-- ARGV[3]     reserve only: the lease an admitted call takes in every
--             inflight limit
-- ARGV[4]     reserve only: the caller's deadline on Redis's clock (µs), 0
--             for none. A call that runs past it writes nothing, for any
--             limit, and replies with the error 'LATE ...': its caller has
--             given up, and what it took nobody would hold or release. The
--             limits then start at ARGV[5] (base 4; else base 2)
-- ARGV[base+i] limit i, one string: "<algorithm> <p1> <p2> <p3> <block ms>"
--     fixed    quota, window ms, -          sliding  quota, window ms, bucket ms
--     log      quota, window ms, -          gcra, token, leaky  interval µs, burst, max wait µs (0: meter)
--     suppressed  soft, hard, window ms     inflight  slots, lease ms, -
--     custom algorithms: their own three parameters
--     A service sends the same few strings over and over: each is parsed
--     once while the library lives (see spec).
-- ARGV[base+n+1] optional: a uniform draw, an integer k in [0, 2^53) for the
--             value k / 2^53, made by the caller (Redis seeds math.random
--             the same way for every script); one per call, upvalue draw
--
-- Reply: 7 integers per limit, in limit order: allowed (1/0), remaining,
-- reset µs, retry-after µs, flags (1: the cost can never pass, 2: blocked,
-- 4: declined by a draw), delay µs (queue mode), effective window µs (0:
-- implied by remaining and reset). A reserve call adds one integer, the
-- call's time (µs), which its deadline was checked against (the engine
-- learns Redis's clock from it). When any limit reports a suppression
-- factor, n strings follow ('%.17g', '0' for the others).
--
-- An algorithm is a function(key, p1, p2, p3) that writes nothing and
-- returns, as things stand: allowed, remaining, reset µs, retry µs, flags;
-- then, when charge is set and it admits: remaining and reset after the
-- charge, delay µs, and a write: op, a, b, c (see commit); then, optionally,
-- a suppression factor (a number in [0, 1]) and the effective window in µs
-- (the time until one more request could pass if the remaining ones were
-- sent at once) as things stand and after the charge, where remaining and
-- reset do not imply it (sliding, log). A write is committed only when
-- every limit admits the call, except the op 'supp', which is committed
-- either way (told whether the call was admitted): an algorithm that counts
-- declined calls (suppressed) returns it when it declines too, and describes
-- the state after the call is counted. Custom algorithms follow the same
-- contract; they may read the upvalues cost, charge, draw, ARGV and call
-- clock() for Redis's time in µs. An algorithm may also have a taker
-- (takers[name]), run instead of it when a call charges and no limit before
-- it has denied: it writes its charge at once and returns the state after
-- it, then the state before it and the write 'untake', which the commit
-- phase applies when another limit denies the call.
--
-- The file is a library body: it defines decide(keys, args) and runs nothing.
-- The store sends it as a Redis Functions library (FUNCTION LOAD once per
-- node, then FCALL: nothing here is re-created per call) or, where Redis has
-- no Functions, as a script ending in 'return decide(KEYS, ARGV)'.
--
-- Time is Redis's own (TIME, µs), read only if needed. Every number stays
-- below 2^53 and is written with string.format('%d'): tostring keeps 14
-- digits. Denied requests are not recorded, and a denial never depends on a
-- write: a block that cannot be written (out of memory) leaves the denial to
-- the counters. A limit in its block waits for the longer of the block and
-- its counters (read, never written), as when the block starts. A blocked
-- call TOUCHes its keys so that eviction by LRU or LFU sees them in use; a
-- fixed window's taker undoes its INCRBY on a denial (DECRBY, in the same
-- atomic call). store/memstore mirrors this arithmetic. No table or closure
-- is made per limit on the common paths: Lua allocation costs as much as a
-- Redis command here.

-- the call's keys, arguments and shared values, set by decide: upvalues of
-- every algorithm, so nothing is made per call to hand them around
local KEYS, ARGV, cost, charge, draw, now, lease

local function clock()
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return now
end

local function int(x)
  return string.format('%d', x)
end

-- num reads an argument as a number, parsed once per distinct string while
-- the library lives (tonumber runs strtod each time): a service sends the
-- same costs over and over. The cache holds at most 4096 strings.
local nums, nums_n = {}, 0
local function num(s)
  local v = nums[s]
  if not v then
    v = tonumber(s)
    if nums_n >= 4096 then nums, nums_n = {}, 0 end
    nums[s], nums_n = v, nums_n + 1
  end
  return v
end

-- spec reads a limit's argument: { algorithm, p1, p2, p3, block ms }, parsed
-- once per distinct string while the library lives (at most 4096 kept), or
-- nil for a string that is not a limit (a draw).
local specs, specs_n = {}, 0
local function spec(s)
  local sp = specs[s]
  if not sp then
    local a, p1, p2, p3, b = string.match(s, '^([%w_]+) (%-?%d+) (%-?%d+) (%-?%d+) (%d+)$')
    if not a then return nil end
    sp = { a, tonumber(p1), tonumber(p2), tonumber(p3), tonumber(b) }
    if specs_n >= 4096 then specs, specs_n = {}, 0 end
    specs[s], specs_n = sp, specs_n + 1
  end
  return sp
end

local algorithms, takers = {}, {}

-- slide_retry returns the µs until a bucketed window estimate leaves room:
-- with the window start sliding forward bucket by bucket (b) from x in bucket
-- o, the first moment full * width + counts[b] * (width - x) <= need. counts
-- is indexed by bucket - o; full sums the buckets o+1..c.
local function slide_retry(counts, full, x, need, width, o, window_ms, now_ms)
  local b = 0
  while true do
    local n, room = counts[b] or 0, need - full * width
    if room >= 0 then
      local at = x
      if n > 0 then at = math.max(x, width - math.floor(room / n)) end
      if at < width then
        return ((o + b) * width + at + window_ms - now_ms) * 1000
      end
    end
    b, x = b + 1, 0
    full = full - (counts[b] or 0)
  end
end

-- slide_window returns the effective window (µs) of a bucketed window
-- estimate with r requests remaining: slide_retry for one more request after
-- r more in bucket c. counts is left as it was.
local function slide_window(counts, full, x, r, quota, width, o, c, window_ms, now_ms)
  local k = c - o
  local before = counts[k]
  counts[k] = (before or 0) + r
  local t = slide_retry(counts, full + r, x, (quota - 1) * width, width, o, window_ms, now_ms)
  counts[k] = before
  return t
end

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
    return true, remaining, reset, 0, 0, remaining - cost, ttl * 1000, 0, 'incr'
  end
  return true, remaining, reset, 0, 0, remaining - cost, ttl * 1000, 0, 'set', ARGV[1], window_ms
end

-- sliding: a hash of bucket index (ms / width) to count. With now in bucket
-- c, the window start s = now - window lies in bucket o = c - window/width:
-- buckets o+1..c count in full, bucket o by (width - s % width) / width.
-- Estimates are compared multiplied by width, in integers.
function algorithms.sliding(key, quota, window_ms, width)
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
  if cost > quota then return false, remaining, reset, 0, 1, nil, nil, nil, nil, nil, nil, nil, nil, window end
  local need = (quota - cost) * width
  if scaled > need then
    return false, remaining, reset, slide_retry(counts, full, x, need, width, o, window_ms, now_ms), 0,
      nil, nil, nil, nil, nil, nil, nil, nil, window
  end
  if not charge then return true, remaining, reset, 0, 0, nil, nil, nil, nil, nil, nil, nil, nil, window end
  local ttl = (c + 1) * width + window_ms - now_ms
  local after = math.floor((quota * width - scaled - cost * width) / width)
  counts[c - o] = (counts[c - o] or 0) + cost
  local after_window = slide_window(counts, full + cost, x, after, quota, width, o, c, window_ms, now_ms)
  return true, remaining, reset, 0, 0, after, ttl * 1000, 0, 'hincr', c, ttl, o, nil, window, after_window
end

-- log: a sorted set of admitted requests, score µs, member "<µs>:<n>" with n
-- counting the requests of that microsecond, so every member is unique.
-- The window is (now - window, now].
function algorithms.log(key, quota, window_ms)
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
  if count + cost > quota then
    if cost > quota then return false, remaining, reset, 0, 1, nil, nil, nil, nil, nil, nil, nil, nil, window end
    -- the (count + cost - quota)-th oldest entry in the window must leave
    local k = count + cost - quota
    local gone = redis.call('ZCOUNT', key, '-inf', int(from))
    local e = redis.call('ZRANGE', key, gone + k - 1, gone + k - 1, 'WITHSCORES')
    return false, remaining, reset, tonumber(e[2]) + window_ms * 1000 - now, 0,
      nil, nil, nil, nil, nil, nil, nil, nil, window
  end
  if not charge then return true, remaining, reset, 0, 0, nil, nil, nil, nil, nil, nil, nil, nil, window end
  local after_window = window
  if count == 0 then after_window = window_ms * 1000 end
  return true, remaining, reset, 0, 0, remaining - cost, window_ms * 1000, 0, 'zadd', now, window_ms, from,
    nil, window, after_window
end

-- gcra, token and leaky share one arithmetic: the state is the theoretical
-- arrival time tat (µs); the bucket is full again at tat. In queue mode
-- (max_wait > 0) an admitted request waits until max(tat, now).
-- gcra_at decides on stored, the key's value (a number or nil).
local function gcra_at(stored, interval, burst, max_wait)
  local now = clock()
  local offset = interval * burst
  local tat = now
  if stored and stored > now then tat = stored end
  local remaining = math.max(math.floor((now - tat + offset) / interval), 0)
  local reset = tat - now
  if cost > burst then return false, remaining, reset, 0, 1 end
  local new_tat = tat + interval * cost
  local diff = now - (new_tat - offset)
  if diff < 0 then return false, remaining, reset, -diff, 0 end
  local delay = 0
  if max_wait > 0 then
    delay = tat - now
    if delay > max_wait then return false, remaining, reset, delay - max_wait, 0 end
  end
  if not charge then return true, remaining, reset, 0, 0 end
  return true, remaining, reset, 0, 0, math.floor(diff / interval), new_tat - now, delay,
    'set', int(new_tat), math.ceil((new_tat - now) / 1000)
end

function algorithms.gcra(key, interval, burst, max_wait)
  return gcra_at(tonumber(redis.call('GET', key)), interval, burst, max_wait)
end
algorithms.token = algorithms.gcra
algorithms.leaky = algorithms.gcra

-- the taker of gcra, token and leaky (see the contract above). A missing key
-- is a full bucket (tat = now), which admits any cost up to burst: the
-- taker writes that charge with SET NX GET, one command instead of GET and
-- SET, and returns the state after it, then the state before it and the
-- write 'untake' (DEL). A key that exists is left as it is (NX) and its
-- value, which GET returns, decided on as gcra does. SET with both NX and
-- GET needs Redis 7 (redis.REDIS_VERSION_NUM is set from 7.0 on); a failed
-- SET (out of memory, in a script run without Functions) leaves the
-- decision to gcra.
local function gcra_take(key, interval, burst, max_wait)
  if cost > burst or not redis.REDIS_VERSION_NUM then return algorithms.gcra(key, interval, burst, max_wait) end
  local now = clock()
  local offset = interval * burst
  local new_tat = now + interval * cost
  local diff = now - (new_tat - offset)
  if diff < 0 then return algorithms.gcra(key, interval, burst, max_wait) end
  local stored = redis.pcall('SET', key, int(new_tat), 'PX', int(math.ceil((new_tat - now) / 1000)), 'NX', 'GET')
  if type(stored) == 'table' and stored.err then return algorithms.gcra(key, interval, burst, max_wait) end
  if stored then return gcra_at(tonumber(stored), interval, burst, max_wait) end
  return true, math.floor(diff / interval), new_tat - now, 0, 0,
    math.max(math.floor((now - now + offset) / interval), 0), 0, 0, 'untake', true
end
takers.gcra, takers.token, takers.leaky = gcra_take, gcra_take, gcra_take

-- inflight: a sorted set of leases, score the lease's expiry µs, member the
-- lease (named by the caller); a lease past its expiry holds nothing. A
-- reserve takes one slot whatever its cost (0 too); a denial's retry is 1 s,
-- as no one can tell when a request ends.
function algorithms.inflight(key, slots, lease_ms)
  local now = clock()
  local live = redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
  local remaining = math.max(slots - live, 0)
  if (cost > 0 or lease) and live >= slots then return false, remaining, 0, 1000000, 0 end
  if not (charge or lease) then return true, remaining, 0, 0, 0 end
  return true, remaining, 0, 0, 0, remaining - 1, 0, 0, 'lease', now, lease_ms
end

--@builtin: lua/suppressed.lua

--@custom

-- over holds the fixed-window keys whose last charge was denied on this
-- node, at most 4096 (the table starts afresh when full). It only orders
-- the commands of the next call: a key in it is read first (GET and PTTL,
-- no write), so a subject that keeps calling over its quota costs neither
-- a write nor a write taken back; the decision is always made on the
-- stored count. A script run without Functions makes it anew per call.
local over, over_n = {}, 0

-- fixed_take is the fixed window's charge: INCRBY first, so an admitted
-- call costs INCRBY and PTTL (PEXPIRE instead of PTTL when the key is new);
-- a call it denies is taken back with DECRBY at once, so a denied call is
-- never recorded, and its key goes into over. It returns allowed,
-- remaining, reset µs, retry µs, flags and whether the call began the
-- window. A failed INCRBY (out of memory, in a script run without
-- Functions) leaves the decision to the read-only check: a denial stands,
-- an admission fails as its write did.
local function fixed_take(key, quota, window_ms)
  if cost > quota then return algorithms.fixed(key, quota, window_ms) end
  if over[key] then
    local ok, remaining, reset, retry, flags = algorithms.fixed(key, quota, window_ms)
    if not ok then return ok, remaining, reset, retry, flags end
    over[key] = nil
  end
  local count = redis.pcall('INCRBY', key, ARGV[1])
  if type(count) ~= 'number' then
    local ok, remaining, reset, retry, flags = algorithms.fixed(key, quota, window_ms)
    if ok then error(count) end -- the admission needs the write: its error is the reply
    return ok, remaining, reset, retry, flags
  end
  if count == cost then -- a new window
    redis.call('PEXPIRE', key, window_ms)
    return true, quota - count, window_ms * 1000, 0, 0, true
  end
  local ttl = redis.call('PTTL', key)
  if ttl <= 0 then
    -- the window has ended (a key lives through the millisecond its PTTL
    -- reads 0), or a counter has no TTL: a new window, as the check says
    redis.call('SET', key, ARGV[1], 'PX', window_ms)
    return true, quota - cost, window_ms * 1000, 0, 0, true
  end
  if count > quota then
    redis.call('DECRBY', key, ARGV[1])
    if over_n >= 4096 then over, over_n = {}, 0 end
    over[key], over_n = true, over_n + 1
    return false, math.max(quota - count + cost, 0), ttl * 1000, ttl * 1000, 0
  end
  return true, quota - count, ttl * 1000, 0, 0, false
end

-- the fixed window's taker (see the contract above): fixed_take, and the
-- state before the charge with the write 'untake', which takes the charge
-- back in the commit phase when another limit denies the call (DEL for a
-- window the call began).
function takers.fixed(key, quota, window_ms)
  local ok, remaining, reset, retry, flags, began = fixed_take(key, quota, window_ms)
  if not ok then return ok, remaining, reset, retry, flags end
  if began then return ok, remaining, reset, 0, 0, quota, 0, 0, 'untake', true end
  return ok, remaining, reset, 0, 0, remaining + cost, reset, 0, 'untake', false
end

-- log_add trims a log to the window after from (µs), adds n entries at
-- time at (µs), numbered after the entries of that time (so the members at
-- one time are at:1 .. at:k), and sets the log's TTL to the window.
local function log_add(key, at, n, window_ms, from)
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

-- log_drop removes up to n entries at time at (µs) from a log, those with
-- the highest numbers, so that the members at that time stay at:1 .. at:k.
local function log_drop(key, at, n)
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

-- commit applies one write; admitted tells a 'supp' write whether the call
-- was admitted.
local function commit(key, op, a, b, c, admitted)
  if op == 'incr' then
    redis.call('INCRBY', key, ARGV[1])
  elseif op == 'set' then
    redis.call('SET', key, a, 'PX', int(b))
  elseif op == 'hincr' then -- a: bucket, b: ttl ms, c: oldest live bucket
    local fields = redis.call('HKEYS', key)
    for j = 1, #fields do
      if tonumber(fields[j]) < c then redis.call('HDEL', key, fields[j]) end
    end
    redis.call('HINCRBY', key, int(a), ARGV[1])
    redis.call('PEXPIRE', key, int(b))
  elseif op == 'zadd' then -- a: now µs, b: window ms, c: window start µs
    log_add(key, a, cost, b, c)
  elseif op == 'supp' then -- a: bucket, b: ttl ms, c: oldest live bucket
    local fields = redis.call('HKEYS', key)
    for j = 1, #fields do
      local idx = tonumber(string.sub(fields[j], 2))
      if not idx or idx < c then redis.call('HDEL', key, fields[j]) end
    end
    redis.call('HINCRBY', key, 't' .. int(a), ARGV[1])
    if admitted then redis.call('HINCRBY', key, 'a' .. int(a), ARGV[1]) end
    redis.call('PEXPIRE', key, int(b))
  elseif op == 'lease' then -- a: now µs, b: lease ms; expired leases go
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(a))
    redis.call('ZADD', key, int(a + b * 1000), lease or ('t' .. int(a)))
    redis.call('PEXPIRE', key, int(b))
  elseif op == 'untake' then -- a taker's charge, taken back: a: the call began the window
    if a then
      redis.call('DEL', key)
    else
      redis.call('DECRBY', key, ARGV[1])
    end
  elseif op then
    return redis.error_reply('ratekit: unknown write ' .. tostring(op))
  end
end

-- decide runs one call: see the contract above.
local function decide(keys, args)
  KEYS, ARGV, now = keys, args, nil
  local mode = ARGV[2]
  if mode == 'reset' then
    for i = 1, #KEYS do
      redis.call('DEL', KEYS[i])
    end
    return {}
  end
  cost = num(ARGV[1])
  local base, reserve = 2, mode == 'reserve'
  lease = nil
  if reserve then
    base, lease = 4, ARGV[3]
    -- first, before any write (a block too): a reserve past its deadline
    -- takes nothing (not num: every deadline is a new string)
    local by = tonumber(ARGV[4])
    if not by then return redis.error_reply('ratekit: malformed deadline ' .. tostring(ARGV[4])) end
    if by > 0 and clock() > by then
      return redis.error_reply('LATE the reserve call ran after its deadline: it took nothing')
    end
  end
  charge = (mode == 'take' or reserve) and cost > 0
  local n = #ARGV - base
  local sp = n > 0 and spec(ARGV[n + base]) -- the last limit, or a draw
  draw = nil
  if n > 0 and not sp then
    draw, n = tonumber(ARGV[n + base]), n - 1
    sp = n > 0 and spec(ARGV[n + base])
  end
  if n < 1 then return redis.error_reply('ratekit: a call names no limit') end
  if n == 1 and sp and sp[5] == 0 and charge and sp[1] == 'fixed' then
    -- the most common call, answered at once: without the bookkeeping of
    -- several limits it costs Redis about 15% less CPU (BenchmarkTake/fixed)
    local ok, remaining, reset, retry, flags = fixed_take(KEYS[1], sp[2], sp[3])
    if reserve then return { ok and 1 or 0, remaining, reset, retry, flags, 0, 0, clock() } end
    return { ok and 1 or 0, remaining, reset, retry, flags, 0, 0 }
  end

  -- check phase: decide every limit, write nothing but blocks
  for i = 1, n do -- every limit is well formed and its algorithm known before anything is written
    local sp = spec(ARGV[i + base])
    if not sp then
      return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[i + base]))
    end
    if not algorithms[sp[1]] then
      return redis.error_reply('ratekit: unknown algorithm ' .. tostring(sp[1]))
    end
  end
  local reply, writes, factors, all = { 0, 0, 0, 0, 0, 0, 0 }, {}, nil, true
  local block_index = n
  for i = 1, n do
    local sp = spec(ARGV[i + base])
    local algorithm = algorithms[sp[1]]
    if charge and all then algorithm = takers[sp[1]] or algorithm end -- no taker once a limit denied
    local block_ms = sp[5]
    local bkey = nil
    if block_ms > 0 then
      block_index = block_index + 1
      bkey = KEYS[block_index]
    end
    local ok, remaining, reset, retry, flags, after_remaining, after_reset, delay, op, wa, wb, wc, factor
    local window, after_window
    local blocked = bkey and redis.call('PTTL', bkey) or -2
    if blocked > 0 then
      -- PTTL leaves a key's LRU/LFU clock alone: TOUCH keeps a block that is
      -- asked about, and its counters, from looking idle to eviction
      redis.call('TOUCH', bkey, KEYS[i])
      -- the counters decide once the block ends: the wait is the longer of
      -- the two, as when a block starts (read as things stand, no write)
      local was_charge, was_lease = charge, lease
      charge, lease = false, nil
      local _, _, own_reset, own_retry = algorithms[sp[1]](KEYS[i], sp[2], sp[3], sp[4])
      charge, lease = was_charge, was_lease
      ok, remaining, flags = false, 0, 2
      reset, retry = math.max(blocked * 1000, own_reset), math.max(blocked * 1000, own_retry)
    else
      ok, remaining, reset, retry, flags, after_remaining, after_reset, delay, op, wa, wb, wc, factor,
        window, after_window = algorithm(KEYS[i], sp[2], sp[3], sp[4])
      if not ok and bkey and flags == 0 and charge then
        -- the denial stands on the counters; a block that cannot be written
        -- (out of memory) only leaves the retry to them
        local set = redis.pcall('SET', bkey, '1', 'PX', int(block_ms))
        if type(set) ~= 'table' or not set.err then
          retry, reset, flags = math.max(retry, block_ms * 1000), math.max(reset, block_ms * 1000), 2
          window = nil
        end
      end
    end
    local o = 7 * (i - 1)
    reply[o + 1] = ok and 1 or 0
    reply[o + 2] = remaining
    reply[o + 3] = reset
    reply[o + 4] = retry
    reply[o + 5] = flags
    reply[o + 6] = 0
    reply[o + 7] = window or 0
    local w = 9 * (i - 1)
    writes[w + 1], writes[w + 2], writes[w + 3], writes[w + 4] = op, wa, wb, wc
    writes[w + 5], writes[w + 6], writes[w + 7], writes[w + 8] = after_remaining, after_reset, delay, after_window
    if factor then
      factors = factors or {}
      factors[i] = factor
    end
    all = all and ok
  end

  -- commit phase: charge every limit, or none; a 'supp' write counts the call
  -- either way (a reserve of cost 0 has writes only for its slots)
  if charge or lease then
    for i = 1, n do
      local w = 9 * (i - 1)
      local op = writes[w + 1]
      if op == 'untake' then -- taken already: kept if every limit admits
        if not all then
          commit(KEYS[i], op, writes[w + 2])
          local o = 7 * (i - 1)
          reply[o + 2], reply[o + 3] = writes[w + 5], writes[w + 6]
        end
      elseif op and (all or op == 'supp') then
        local err = commit(KEYS[i], op, writes[w + 2], writes[w + 3], writes[w + 4], all)
        if err then return err end
        if all then
          local o = 7 * (i - 1)
          reply[o + 2], reply[o + 3], reply[o + 6] = writes[w + 5], writes[w + 6], writes[w + 7]
          reply[o + 7] = writes[w + 8] or 0
        end
      end
    end
  end
  local at = 0
  if reserve then
    at = 1
    reply[7 * n + 1] = clock()
  end
  if factors then
    for i = 1, n do
      reply[7 * n + at + i] = string.format('%.17g', factors[i] or 0)
    end
  end
  return reply
end
