-- ratekit prelude: what the engine's programs share (docs/architecture.md,
-- "Functions, and scripts"). A number made into a string in Lua is written
-- with int (tostring keeps 14 digits); one passed to redis.call as a number
-- is written by Redis with 17, exact for the integers below 2^53 used here.

-- the call's values, set by the program that runs, upvalues of every
-- algorithm: draw is k for k / 2^53 or nil, lease the call's or nil, now
-- Redis's time once read (see clock).
local KEYS, ARGV, cost, charge, draw, now, lease

-- clock returns Redis's time in µs, read once per call.
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

-- num is tonumber cached per distinct string (at most 4096): strtod is slow.
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

-- algorithms by name; writes[op](key, r, admitted) by the op an answer
-- names; a write in always is committed even when the call is denied.
local algorithms, writes, always = {}, {}, {}

function writes.incr(key) redis.call('INCRBY', key, ARGV[1]) end
function writes.decr(key) redis.call('DECRBY', key, ARGV[1]) end
function writes.set(key, r) redis.call('SET', key, r.a, 'PX', math.floor(r.b)) end
function writes.del(key) redis.call('DEL', key) end

-- over holds the keys of counters (fixed, calendar) whose last charge was
-- denied on this node (at most 4096): their next call reads first, to write
-- nothing while the window is full.
local over, over_n = {}, 0
local function mark_over(key)
  if over_n >= 4096 then over, over_n = {}, 0 end
  over[key], over_n = true, over_n + 1
end

-- give_back takes up to n off the counter at key (fixed, calendar), deleting
-- it once emptied: an emptied window is no window
local function give_back(key, n)
  local v = tonumber(redis.call('GET', key)) or 0
  if math.min(n, v) >= v then
    redis.call('DEL', key)
  elseif n > 0 then
    redis.call('DECRBY', key, n)
  end
end

-- custom makes the algorithm of a custom decide function f.
local function custom(f)
  return {
    decide = function(r, key, p1, p2, p3)
      r.delay, r.after_window = false, false
      return f(r, key, p1, p2, p3)
    end,
  }
end

-- spec reads a limit's argument, cached as num is: { algorithm, p1, p2, p3,
-- block ms, decide, take or decide (none if unknown), stale or false }, or
-- nil (a draw).
local specs, specs_n = {}, 0
local function spec(s)
  local sp = specs[s]
  if not sp then
    local a, p1, p2, p3, b = string.match(s, '^([%w_]+) (%-?%d+) (%-?%d+) (%-?%d+) (%d+)$')
    if not a then return nil end
    local algorithm = algorithms[a]
    sp = { a, tonumber(p1), tonumber(p2), tonumber(p3), tonumber(b), false, false, false }
    if algorithm then sp[6], sp[7], sp[8] = algorithm.decide, algorithm.take or algorithm.decide, algorithm.stale or false end
    if specs_n >= 4096 then specs, specs_n = {}, 0 end
    specs[s], specs_n = sp, specs_n + 1
  end
  return sp
end

-- Overrides (Limiter.Override): a limit's override for a subject is the
-- key <state key>:o, "<carry.Reset 0|1> <p1> <p2> <p3> <block ms> <n1> ...
-- <n8>[ <end µs>]", the arguments in force ('-' keeps the limit's own: a
-- calendar's period) and the numbers the engine reads back (algo.Numbers),
-- with a TTL to the override's end; for a carry.Reset limit, whose state
-- goes with the override, the end itself, and a TTL past it that outlives
-- the state, so that the decision that finds it ended deletes both.
-- parse_override reads one, cached as num is (false: malformed).
local ovs, ovs_n = {}, 0
local function parse_override(v)
  local o = ovs[v]
  if o == nil then
    o = false
    local f = {}
    for w in string.gmatch(v, '%S+') do f[#f + 1] = w end
    if (#f == 13 or #f == 14) and tonumber(f[2]) and tonumber(f[5]) then
      o = { tonumber(f[14]) or 0, f[1] == '1', tonumber(f[2]), tonumber(f[3]), tonumber(f[4]), tonumber(f[5]), {} }
      for j = 6, 13 do o[7][j - 5] = tonumber(f[j]) or 0 end
    end
    if ovs_n >= 4096 then ovs, ovs_n = {}, 0 end
    ovs[v], ovs_n = o, ovs_n + 1
  end
  return o
end

-- in_force returns the spec in force for limit sp given v, the value of
-- its override key okey (false: none): sp, or sp with the override's
-- arguments (a limit without a block gets none), then the override's
-- numbers when one is in force. A carry.Reset limit's override that has
-- ended (its key outlives it, see override.lua) is deleted, with the state
-- made under it: its key and block key bkey (nil: none).
local merged, merged_n = {}, 0
local function in_force(sp, v, key, bkey, okey)
  if not v then return sp end
  local o = parse_override(v)
  if not o then return sp end
  if o[1] > 0 and clock() >= o[1] then
    redis.call('DEL', okey, key)
    if bkey then redis.call('DEL', bkey) end
    return sp
  end
  local by = merged[v]
  local m = by and by[sp]
  if not m then
    local block = o[6]
    if sp[5] == 0 then block = 0 end
    m = { sp[1], o[3] or sp[2], o[4] or sp[3], o[5] or sp[4], block, sp[6], sp[7], sp[8] }
    if not by then
      if merged_n >= 4096 then merged, merged_n = {}, 0 end
      by, merged_n = {}, merged_n + 1
      merged[v] = by
    end
    by[sp] = m
  end
  return m, o[7]
end

-- with_overrides puts in sps the specs in force of a call's n limits (an
-- override's, read from the override keys after the block keys, when the
-- call has them) and returns each limit's block key (nil: none) and the
-- numbers of the override in force.
local function with_overrides(sps, n)
  local blocks, bkeys, nums, ovals = n, {}, {}, {}
  for i = 1, n do
    if sps[i][5] > 0 then
      blocks = blocks + 1
      bkeys[i] = KEYS[blocks]
    end
  end
  if #KEYS > blocks then ovals = redis.call('MGET', unpack(KEYS, blocks + 1, blocks + n)) end
  for i = 1, n do
    sps[i], nums[i] = in_force(sps[i], ovals[i], KEYS[i], bkeys[i], KEYS[blocks + i])
  end
  return bkeys, nums
end

-- stale returns the error reply that refuses, before any write, a call
-- whose limit sp has arguments made for another time than Redis's (its
-- algorithm's stale says so), else nil; the engine sends it again with
-- the arguments for the time the reply gives (µs).
local function stale(sp)
  if sp[8] and sp[8](sp[2], sp[3], sp[4]) then return redis.error_reply('STALE ' .. int(clock())) end
end

-- prune deletes the fields of the hash at key that name no bucket or one
-- before oldest; with tagged a field is a letter and a number ('t12').
local function prune(key, oldest, tagged)
  local fields = redis.call('HKEYS', key)
  for j = 1, #fields do
    local f = fields[j]
    local idx = tonumber(tagged and string.sub(f, 2) or f)
    if not idx or idx < oldest then redis.call('HDEL', key, f) end
  end
end

-- Bucketed windows (sliding, suppressed): with now in bucket c of width
-- width, the window start s = now - window lies in bucket o = c -
-- window/width, at x = s % width within it; buckets o+1..c count in full,
-- bucket o by (width - x) / width. Estimates are compared multiplied by
-- width, in integers.

-- slide_retry returns the µs until the estimate leaves room: the first moment
-- full * width + counts[b] * (width - x) <= need as the window start slides
-- bucket by bucket (b) from x in bucket o. counts is indexed by bucket - o;
-- full sums the buckets o+1..c.
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

-- slide_window returns the effective window (µs) with r requests remaining:
-- slide_retry for one more after r more in bucket c.
local function slide_window(counts, full, x, r, quota, width, o, c, window_ms, now_ms)
  local k = c - o
  local before = counts[k]
  counts[k] = (before or 0) + r
  local t = slide_retry(counts, full + r, x, (quota - 1) * width, width, o, window_ms, now_ms)
  counts[k] = before
  return t
end

-- moves splits a settle from cost was to cost to, in a limit that holds at
-- most quota of a charge and held of this one: what to give back (at most
-- held), what to charge extra, and what it holds after the give-back.
local function moves(was, to, quota, held)
  was, to = math.min(was, quota), math.min(to, quota)
  if to < was then
    return math.min(was - to, held), 0, math.max(held - (was - to), 0)
  elseif to > was then
    return 0, to - was, held
  end
  return 0, 0, held
end
