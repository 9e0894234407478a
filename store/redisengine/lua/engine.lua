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
-- An algorithm is a table in algorithms, by name, one file each on the
-- prelude. Its decide(r, key, p1, p2, p3) reads the limit's state, writes
-- nothing, and returns its answer: r, a table the engine lends (kept while
-- the library lives, its window, factor and op cleared), filled in, or a
-- table of its own. An answer holds, as things stand: allowed (a boolean),
-- remaining, reset µs; for a denial, retry µs and flags; where the
-- algorithm has them, window (the effective window µs: the time until one
-- more request could pass if the remaining ones were sent at once, where
-- remaining and reset do not imply it) and factor (a suppression factor in
-- [0, 1]). When charge is set and it admits: op, the name of a write in
-- writes, with its arguments a, b, c, and the state after the charge:
-- after_remaining, after_reset µs, delay µs (queue mode) and after_window
-- (an algorithm of the kit gives all four; custom ones may leave out the
-- last two). A write is committed only when every limit admits the call,
-- but one in always (supp), committed either way and told whether the call
-- was admitted: an algorithm that counts declined calls (suppressed) names
-- it when it declines too, and answers with the state after the call is
-- counted. The writes: incr (INCRBY cost), decr (DECRBY cost), set (SET a
-- PX b), del (DEL); hincr (sliding: HINCRBY bucket a by cost, TTL b ms,
-- buckets before c pruned), zadd (log: cost entries at a µs, window b ms,
-- trimmed to after c µs), supp (suppressed) and lease (inflight).
--
-- An algorithm may have a take(r, key, p1, p2, p3), run instead of decide
-- when a call charges and no limit before it has denied: it may write its
-- charge at once and answer with the state after it and undo, the write
-- that takes it back (decr, or del where the charge made the key), which
-- the commit phase applies when another limit denies the call; the limit's
-- reply is then the state without the charge (remaining + cost, and reset
-- 0 after del). Its settle and renew are lua/settle.lua's. A custom
-- algorithm is a decide function (algorithms[name] = custom(f)); it may
-- read the upvalues cost, charge, draw and ARGV, and call clock() for
-- Redis's time in µs and int() to write an integer. A field of a lent
-- table is cleared with false, never nil: a field set to nil gives up its
-- slot, and its next value makes the table grow (allocate) again.
--
-- The file defines decide(keys, args) and runs nothing. The store sends the
-- engine as a Redis Functions library (FUNCTION LOAD once per node, then
-- FCALL: nothing here is re-created per call) or, where Redis has no
-- Functions, as a script ending in 'return decide(KEYS, ARGV)'.
--
-- Denied requests are not recorded, and a denial never depends on a write:
-- a block that cannot be written (out of memory) leaves the denial to the
-- counters. A limit in its block waits for the longer of the block and its
-- counters (read, never written), as when the block starts. A blocked call
-- TOUCHes its keys so that eviction by LRU or LFU sees them in use.
-- internal/algo mirrors this arithmetic. No table or closure is made per
-- limit on the common paths: Lua allocation costs as much as a Redis
-- command here.

-- lent holds the answer table lent to the algorithm of each limit, by
-- limit index, and answers the answer each one returned; one is the
-- answer lent on a call of one limit. All are kept while the library lives,
-- so that a call makes no table but its reply.
local lent, answers, one = {}, {}, {}

-- commit applies the write of answer r to key (see the contract above),
-- told whether every limit admitted the call, and puts the state after it
-- in reply at offset o when it did.
local function commit(key, r, all, reply, o)
  local write = writes[r.op]
  if not write then return redis.error_reply('ratekit: unknown write ' .. tostring(r.op)) end
  write(key, r, all)
  if all then
    reply[o + 2], reply[o + 3] = r.after_remaining, r.after_reset
    reply[o + 6], reply[o + 7] = r.delay or 0, r.after_window or 0
  end
end

-- finish ends the reply of n limits: the call's time for a reserve, then
-- the suppression factors, if any limit has one.
local function finish(reply, n, reserve, factors)
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

-- decide runs one call: see the contract above. Its hottest lines read the
-- caches of num and spec before calling them: a Lua call costs more than
-- a table read.
local function decide(keys, args)
  KEYS, ARGV, now = keys, args, nil -- start(keys, args)
  local mode = ARGV[2]
  if mode == 'reset' then
    for i = 1, #KEYS do
      redis.call('DEL', KEYS[i])
    end
    return {}
  end
  cost = nums[ARGV[1]] or num(ARGV[1])
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
  local sp = n > 0 and (specs[ARGV[n + base]] or spec(ARGV[n + base])) -- the last limit, or a draw
  draw = nil
  if n > 0 and not sp then
    draw, n = tonumber(ARGV[n + base]), n - 1
    sp = n > 0 and spec(ARGV[n + base])
  end
  if n < 1 then return redis.error_reply('ratekit: a call names no limit') end
  if n == 1 and sp and sp[5] == 0 then
    -- one limit without a block, the most common call: its answer is the
    -- reply, without the bookkeeping of several limits (an undo applies
    -- only where another limit denies)
    local f = charge and sp[7] or sp[6]
    if not f then return redis.error_reply('ratekit: unknown algorithm ' .. tostring(sp[1])) end
    one.window, one.factor, one.op = false, false, false
    local r = f(one, KEYS[1], sp[2], sp[3], sp[4])
    local reply
    if r.allowed then
      reply = { 1, r.remaining, r.reset, 0, 0, 0, r.window or 0 }
    else
      reply = { 0, r.remaining, r.reset, r.retry, r.flags, 0, r.window or 0 }
    end
    if r.op and (charge or lease) and (r.allowed or always[r.op]) then
      local err = commit(KEYS[1], r, r.allowed, reply, 0)
      if err then return err end
    end
    if reserve or r.factor then return finish(reply, 1, reserve, r.factor and { r.factor }) end
    return reply
  end

  -- check phase: decide every limit, write nothing but blocks (and the
  -- charges of takers)
  for i = 1, n do -- every limit is well formed and its algorithm known before anything is written
    local sp = spec(ARGV[i + base])
    if not sp then
      return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[i + base]))
    end
    if not sp[6] then return redis.error_reply('ratekit: unknown algorithm ' .. tostring(sp[1])) end
  end
  local reply, factors, all = { 0, 0, 0, 0, 0, 0, 0 }, nil, true
  local block_index = n
  for i = 1, n do
    local sp, key = spec(ARGV[i + base]), KEYS[i]
    local r = lent[i]
    if not r then
      r = {}
      lent[i] = r
    end
    r.window, r.factor, r.op, r.undo = false, false, false, false
    local block_ms = sp[5]
    local bkey = nil
    if block_ms > 0 then
      block_index = block_index + 1
      bkey = KEYS[block_index]
    end
    local blocked = bkey and redis.call('PTTL', bkey) or -2
    if blocked > 0 then
      -- PTTL leaves a key's LRU/LFU clock alone: TOUCH keeps a block that is
      -- asked about, and its counters, from looking idle to eviction
      redis.call('TOUCH', bkey, key)
      -- the counters decide once the block ends: the wait is the longer of
      -- the two, as when a block starts (read as things stand, no write)
      local was_charge, was_lease = charge, lease
      charge, lease = false, nil
      r = sp[6](r, key, sp[2], sp[3], sp[4])
      charge, lease = was_charge, was_lease
      local retry = 0 -- (an admission's retry is 0, whatever its answer holds)
      if not r.allowed then retry = r.retry end
      r.allowed, r.remaining, r.flags = false, 0, 2
      r.reset, r.retry = math.max(blocked * 1000, r.reset), math.max(blocked * 1000, retry)
      r.window, r.factor, r.op = false, false, false
    else
      local f = charge and all and sp[7] or sp[6] -- no taker once a limit denied
      r = f(r, key, sp[2], sp[3], sp[4])
      if not r.allowed and bkey and r.flags == 0 and charge then
        -- the denial stands on the counters; a block that cannot be written
        -- (out of memory) only leaves the retry to them
        local set = redis.pcall('SET', bkey, '1', 'PX', int(block_ms))
        if type(set) ~= 'table' or not set.err then
          r.retry, r.reset, r.flags = math.max(r.retry, block_ms * 1000), math.max(r.reset, block_ms * 1000), 2
          r.window = false
        end
      end
    end
    answers[i] = r
    local o = 7 * (i - 1)
    reply[o + 1], reply[o + 2], reply[o + 3], reply[o + 4], reply[o + 5] = 0, r.remaining, r.reset, 0, 0
    reply[o + 6], reply[o + 7] = 0, r.window or 0
    if r.allowed then
      reply[o + 1] = 1
    else
      reply[o + 4], reply[o + 5] = r.retry, r.flags
    end
    if r.factor then
      factors = factors or {}
      factors[i] = r.factor
    end
    all = all and r.allowed
  end

  -- commit phase: charge every limit, or none; a write in always counts
  -- the call either way (a reserve of cost 0 has writes only for its
  -- slots). A taker's charge, written already, stays if every limit
  -- admits; else its undo takes it back, and the limit's reply is the state
  -- without it: cost more remaining, and no reset where the undo deleted
  -- the key the charge made.
  if charge or lease then
    for i = 1, n do
      local r, o = answers[i], 7 * (i - 1)
      if r.undo then
        if not all then
          writes[r.undo](KEYS[i], r, all)
          reply[o + 2] = r.remaining + cost
          if r.undo == 'del' then reply[o + 3] = 0 end
        end
      elseif r.op and (all or always[r.op]) then
        local err = commit(KEYS[i], r, all, reply, o)
        if err then return err end
      end
    end
  end
  return finish(reply, n, reserve, factors)
end
