-- ratekit engine: decide(keys, args) decides every limit of one subject in
-- one atomic call, through algorithms[name] only. Its contract is
-- docs/architecture.md, "The decide program".

-- the tables lent to each limit's algorithm (lend: limit i's, its optional
-- fields cleared), and their answers: kept, so a call makes no table but its reply
local lent, answers = {}, {}
local function lend(i)
  local r = lent[i] or {}
  lent[i] = r
  r.window, r.factor, r.op, r.undo, r.stale = false, false, false, false, false
  return r
end

-- answer puts r, a limit's answer, into reply as seven integers from o + 1
local function answer(reply, o, r)
  local ok = r.allowed
  reply[o + 1], reply[o + 2], reply[o + 3] = ok and 1 or 0, r.remaining, r.reset
  reply[o + 4], reply[o + 5] = ok and 0 or r.retry, ok and 0 or r.flags
  reply[o + 6], reply[o + 7] = 0, r.window or 0
end

-- commit applies r's write to key if admitted (all) or always[r.op], then puts
-- the state after it into reply from o + 1; an unknown write is an error reply
local function commit(key, r, all, reply, o)
  if not (r.op and (all or always[r.op])) then return nil end
  local write = writes[r.op]
  if not write then return redis.error_reply('ratekit: unknown write ' .. tostring(r.op)) end
  write(key, r, all)
  if all then
    reply[o + 2], reply[o + 3] = r.after_remaining, r.after_reset
    reply[o + 6], reply[o + 7] = r.delay or 0, r.after_window or 0
  end
end

-- overridden puts into reply, from at + 1, limit i's index and the numbers
-- of the override that decided it, and returns where they end
local function overridden(reply, at, i, nums)
  reply[at + 1] = i
  for j = 1, 8 do reply[at + 1 + j] = nums[j] end
  return at + 9
end

local function decide(keys, args)
  KEYS, ARGV, now = keys, args, nil
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
    -- before any write: a reserve past its deadline takes nothing
    local by = tonumber(ARGV[4])
    if not by then return redis.error_reply('ratekit: malformed deadline ' .. tostring(ARGV[4])) end
    if by > 0 and clock() > by then
      return redis.error_reply('LATE the reserve call ran after its deadline: it took nothing')
    end
  end
  charge = (mode == 'take' or reserve) and cost > 0
  draw = nil
  if not reserve and #ARGV == 3 then
    -- one limit, no draw, no block (most calls): the steps below for n = 1,
    -- without their bookkeeping (a taker that denies took its charge back)
    local sp = spec(ARGV[3])
    if sp and sp[6] and sp[5] == 0 then
      local nums
      if KEYS[2] then sp, nums = in_force(sp, redis.call('GET', KEYS[2]), KEYS[1], nil, KEYS[2]) end
      -- an algorithm that follows the clock checks its arguments itself
      -- here, writing nothing once it finds them stale
      local r = (charge and sp[7] or sp[6])(lend(1), KEYS[1], sp[2], sp[3], sp[4])
      if r.stale then return redis.error_reply('STALE ' .. int(clock())) end
      local reply = { 0, 0, 0, 0, 0, 0, 0 }
      answer(reply, 0, r)
      local err = charge and commit(KEYS[1], r, r.allowed, reply, 0)
      if err then return err end
      if nums then overridden(reply, 7, 1, nums) end
      if r.factor then reply[#reply + 1] = string.format('%.17g', r.factor) end
      return reply
    end
  end
  local n = #ARGV - base
  if n > 0 and not spec(ARGV[n + base]) then -- the last argument is a draw
    draw, n = tonumber(ARGV[n + base]), n - 1
  end
  if n < 1 then return redis.error_reply('ratekit: a call names no limit') end

  -- every limit is well formed and its algorithm known before any write
  local sps = {}
  for i = 1, n do
    local sp = spec(ARGV[i + base])
    if not sp then return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[i + base])) end
    if not sp[6] then return redis.error_reply('ratekit: unknown algorithm ' .. tostring(sp[1])) end
    local err = stale(sp)
    if err then return err end
    sps[i] = sp
  end
  -- then the overrides in force, as the specs to decide by
  local bkeys, nums = with_overrides(sps, n)
  -- check phase: decide every limit, write nothing but blocks and takers'
  -- charges
  local reply, factors, all = { 0, 0, 0, 0, 0, 0, 0 }, nil, true
  for i = 1, n do
    local sp, key = sps[i], KEYS[i]
    local r = lend(i)
    local block_ms, bkey = sp[5], bkeys[i]
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
      local retry = r.allowed and 0 or r.retry -- (an admission's is 0, whatever its answer holds)
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
    answer(reply, 7 * (i - 1), r)
    if r.factor then
      factors = factors or {}
      factors[i] = r.factor
    end
    all = all and r.allowed
  end

  -- commit phase: charge every limit, or none (a write in always either
  -- way); a taker's charge, written already, is taken back by its undo
  if charge or lease then
    for i = 1, n do
      local r, o = answers[i], 7 * (i - 1)
      if r.undo then
        if not all then
          writes[r.undo](KEYS[i], r, all)
          reply[o + 2] = r.remaining + cost
          if r.undo == 'del' then reply[o + 3] = 0 end
        end
      else
        local err = commit(KEYS[i], r, all, reply, o)
        if err then return err end
      end
    end
  end
  -- then a reserve's time, then any suppression factors
  local at = 7 * n
  if reserve then
    at = at + 1
    reply[at] = clock()
  end
  -- then, for each limit an override decided, its index and numbers
  for i = 1, n do
    if nums[i] then at = overridden(reply, at, i, nums[i]) end
  end
  for i = 1, factors and n or 0 do
    reply[at + i] = string.format('%.17g', factors[i] or 0)
  end
  return reply
end
