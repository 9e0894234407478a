-- calendar: a fixed window whose windows are the periods of the calendar (or
-- windows aligned to the clock). p1 quota, p2 and p3 the start and end (ms)
-- of a period near the application's time (internal/algo/calendar.go). Redis
-- keeps a counter per subject that expires at its period's end (PXAT), so a
-- live counter counts the period that holds Redis's time, and is decided as
-- fixed.lua decides a window: INCRBY, PTTL. Only a call that starts a period
-- reads TIME, to pick it from the bounds: this period, or, from a margin
-- before its start, the one before, which ends at its start (algo.Margin).
-- Bounds that hold neither are stale: the call is refused unrun (r.stale) and
-- sent again with Redis's time. Reset, retry and the effective window are
-- the time to the period's end, to the ms, as PTTL reads it.

-- period_end returns the end (ms) of the period that holds Redis's time, or
-- nil when the bounds hold neither it nor the one before
local function period_end(start, finish)
  local t = clock()
  if t >= finish * 1000 or t < (start - math.min(2000, math.floor((finish - start) / 2))) * 1000 then return nil end
  if t < start * 1000 then return start end
  return finish
end

local function period_stale(_, start, finish) return not period_end(start, finish) end

-- period_new returns how long a counter started now lives (ms, as PTTL will
-- read it) and its end, or nil (stale)
local function period_new(start, finish)
  local e = period_end(start, finish)
  if e then return e - math.floor(clock() / 1000), e end
end

-- period_answer decides a charge of cost against count, ttl ms from the end
local function period_answer(r, quota, count, ttl)
  r.allowed, r.remaining, r.reset, r.window = true, math.max(quota - count, 0), 0, ttl * 1000
  if count > 0 then r.reset = ttl * 1000 end
  if count + cost > quota then
    r.allowed, r.retry, r.flags = false, ttl * 1000, 0
    if cost > quota then r.retry, r.flags = 0, 1 end
  end
  return r
end

-- check: the counter read (GET, PTTL) and decided, nothing written
local function period_check(r, key, quota, start, finish)
  local count, ttl, e = 0, nil, nil
  local stored = redis.call('GET', key)
  if stored then
    local pttl = redis.call('PTTL', key)
    if pttl > 0 then count, ttl = tonumber(stored) or 0, pttl end
  end
  if not ttl then
    ttl, e = period_new(start, finish)
    if not ttl then
      r.stale = true
      return r
    end
  end
  period_answer(r, quota, count, ttl)
  if r.allowed and charge then
    r.after_remaining, r.after_reset, r.delay, r.after_window = quota - count - cost, ttl * 1000, 0, ttl * 1000
    if e then
      r.op, r.a, r.b = 'period', ARGV[1], e
    else
      r.op = 'incr'
    end
  end
  return r
end

function writes.period(key, r) redis.call('SET', key, r.a, 'PXAT', r.b) end

-- take: the charge written first (INCRBY), taken back at once on a denial;
-- an admission's undo is DEL for a period the call began, else DECRBY. A key
-- over its quota (prelude's over) is read first, as fixed.lua does.
local function period_take(r, key, quota, start, finish)
  if cost > quota then return period_check(r, key, quota, start, finish) end
  if over[key] then
    if not period_check(r, key, quota, start, finish).allowed or r.stale then return r end
    over[key], r.op = nil, false
  end
  local count = redis.pcall('INCRBY', key, ARGV[1])
  if type(count) ~= 'number' then
    if period_check(r, key, quota, start, finish).allowed then error(count) end -- the admission needs the write
    return r
  end
  local ttl = 0
  if count ~= cost then ttl = redis.call('PTTL', key) end
  if ttl <= 0 then -- a new period, or a counter past its end
    local e
    ttl, e = period_new(start, finish)
    if not ttl then
      if count == cost then redis.call('DEL', key) else redis.call('DECRBY', key, ARGV[1]) end
      r.stale = true
      return r
    end
    redis.call('SET', key, ARGV[1], 'PXAT', e)
    r.allowed, r.remaining, r.reset, r.window, r.undo = true, quota - cost, ttl * 1000, ttl * 1000, 'del'
    return r
  end
  if count > quota then
    redis.call('DECRBY', key, ARGV[1])
    mark_over(key)
    return period_answer(r, quota, count - cost, ttl)
  end
  r.allowed, r.remaining, r.reset, r.window, r.undo = true, quota - count, ttl * 1000, ttl * 1000, 'decr'
  return r
end

-- settle: the charged period is the live counter's while its end is within
-- a second (half a period if shorter: algo's near) of e. A give-back comes off its count
-- (an emptied counter is deleted); an extra charge goes to it while it
-- lives, else to a counter of the current period.
local function period_settle(key, quota, start, finish, was, to, e, held)
  local give, extra
  give, extra, held = moves(was, to, quota, held)
  if give == 0 and extra == 0 then return e, held end
  local pttl = redis.call('PTTL', key)
  local at, near = nil, math.min(1000000, (finish - start) * 500)
  if pttl > 0 then at = (math.floor(clock() / 1000) + pttl) * 1000 end
  if give > 0 then
    if at and math.abs(at - e) < near then
      give_back(key, give)
    end
  elseif at then
    redis.call('INCRBY', key, extra)
    if math.abs(at - e) >= near then held = 0 end
    e, held = at, held + extra
  else
    local _, pe = period_new(start, finish)
    redis.call('SET', key, extra, 'PXAT', pe)
    e, held = pe * 1000, extra
  end
  return e, held
end

algorithms.calendar = { decide = period_check, take = period_take, settle = period_settle, stale = period_stale }
