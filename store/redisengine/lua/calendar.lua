-- calendar: a count per period of the calendar, or per window aligned to the
-- clock. p1 quota, p2 and p3 the start and end (ms) of a period, as the
-- application computed them from the time zone's rules near its own time
-- (internal/algo/calendar.go). The call counts in the period that holds
-- Redis's time: this one, or, from a margin before its start, the one before,
-- which ends at its start; a call whose bounds hold neither is refused unrun
-- (stale) and sent again with Redis's time. Redis keeps "<end ms>:<count>"
-- per subject, expiring at the period's end: a count of another period is 0.
-- Remaining is quota - count; reset and retry are the µs to the period's
-- end, and so is the effective window.

-- period_margin: 2 s, or half the period if shorter (algo.Margin)
local function period_margin(start, finish)
  return math.min(2000, math.floor((finish - start) / 2))
end

local function period_stale(_, start, finish)
  local t = clock()
  return t < (start - period_margin(start, finish)) * 1000 or t >= finish * 1000
end

-- period_end returns the end (ms) of the period that holds Redis's time
local function period_end(start, finish)
  if clock() < start * 1000 then return start end
  return finish
end

-- period_count returns the count at key for the period ending at finish
local function period_count(key, finish)
  local stored = redis.call('GET', key)
  if stored then
    local e, n = string.match(stored, '^(%d+):(%d+)$')
    if tonumber(e) == finish then return tonumber(n) end
  end
  return 0
end

local function period_decide(r, key, quota, start, finish)
  finish = period_end(start, finish)
  local n, left = period_count(key, finish), finish * 1000 - clock()
  r.allowed, r.remaining, r.reset, r.window = true, math.max(quota - n, 0), 0, left
  if n > 0 then r.reset = left end
  if n + cost > quota then
    r.allowed, r.retry, r.flags = false, left, 0
    if cost > quota then r.retry, r.flags = 0, 1 end
    return r
  end
  if charge then
    r.after_remaining, r.after_reset, r.delay, r.after_window = quota - n - cost, left, 0, left
    r.op, r.a, r.b = 'period', int(finish) .. ':' .. int(n + cost), finish
  end
  return r
end

function writes.period(key, r) redis.call('SET', key, r.a, 'PXAT', r.b) end

-- settle: a give-back comes off the charged period while it is the current
-- one (an emptied count is deleted); an extra charge goes to the current
-- period, which holds the charge's units still when it is the charged one.
local function period_settle(key, quota, start, finish, was, to, e, held)
  finish = period_end(start, finish)
  local give, extra
  give, extra, held = moves(was, to, quota, held)
  if give > 0 then
    if e == finish * 1000 then
      local n = period_count(key, finish)
      give = math.min(give, n)
      if give >= n then
        redis.call('DEL', key)
      elseif give > 0 then
        redis.call('SET', key, int(finish) .. ':' .. int(n - give), 'PXAT', finish)
      end
    end
  elseif extra > 0 then
    local n = period_count(key, finish)
    redis.call('SET', key, int(finish) .. ':' .. int(n + extra), 'PXAT', finish)
    if e ~= finish * 1000 then held = 0 end
    e, held = finish * 1000, held + extra
  end
  return e, held
end

algorithms.calendar = { decide = period_decide, settle = period_settle, stale = period_stale }
