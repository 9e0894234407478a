-- ratekit settle: moves an admitted call's charge after the fact, releases
-- its in-flight leases, or renews them, in one atomic call.
--
-- KEYS[1..n]   state key of limit i (block keys may follow; they are never
--              touched, so a refund never lifts a block)
-- ARGV[1]      mode: "settle" or "renew"
-- ARGV[2]      the charge's cost as it stands
-- ARGV[3]      settle: the cost to move it to
-- ARGV[4]      the call's lease, '' when it holds none
-- ARGV[4+i]    limit i, as the engine's "<algorithm> <p1> <p2> <p3> <block ms>"
-- ARGV[4+n+i]  limit i's end: where the charge sits, µs (fixed: its window's
--              end; gcra, token, leaky: the arrival time after the charge;
--              sliding, log: the time it is counted at; 0: nowhere)
-- ARGV[4+2n+i] limit i's held: how much of the charge limit i holds there
--
-- Reply: settle: 2n integers, each limit's end and held as they now stand;
-- renew: n integers, 1 where the lease is held (or the limit is not
-- inflight), 0 where it lapsed (it is not taken again).
--
-- A limit holds at most one quota (a bucket's burst) of a call's charge.
-- A refund gives back only what the limit holds of the charge (held), as
-- far as its state still has it: a fixed window's count while the charged
-- window lives, a sliding window's bucket, the log entries of the charge
-- while they are in the window, and of a bucket only the part not yet
-- refilled; never below zero. An extra charge is added past the quota if
-- need be: to the charged fixed window while it lives (else to a new one),
-- to a bucket's arrival time, and for a sliding window or log, what the
-- limit still holds of the charge moves to now with the extra, so that the
-- charge sits in one place. Suppressed and custom algorithms are left as
-- they are. store/memstore's settle.go holds the same rules.

-- It runs inside the engine's library (or script), whose spec, int and
-- log_add it uses: limit arguments are parsed once per distinct string
-- there too.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now_ms = math.floor(now / 1000)
local mode, was_cost, to_cost, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local n = (#ARGV - 4) / 3
local reply = {}

-- A fixed window is the one charged when its end, read to the ms, is within
-- half a window of e: the windows of a key end at least a window apart.

for i = 1, n do
  local sp = spec(ARGV[4 + i])
  if not sp then return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[4 + i])) end
  local a, p1, p2, p3 = sp[1], sp[2], sp[3], sp[4]
  local key, e, held = KEYS[i], tonumber(ARGV[4 + n + i]), tonumber(ARGV[4 + 2 * n + i])
  local bucket = a == 'gcra' or a == 'token' or a == 'leaky'
  if mode == 'renew' then
    reply[i] = 1
    if a == 'inflight' then
      local score = redis.call('ZSCORE', key, lease)
      if score and tonumber(score) > now then
        redis.call('ZADD', key, 'XX', int(now + p2 * 1000), lease)
        redis.call('PEXPIRE', key, p2)
      else
        reply[i] = 0
      end
    end
  elseif a == 'inflight' then
    if lease ~= '' then redis.call('ZREM', key, lease) end
  elseif a == 'fixed' or a == 'sliding' or a == 'log' or bucket then
    local quota = p1
    if bucket then quota = p2 end
    local was, to = math.min(was_cost, quota), math.min(to_cost, quota)
    if to < was then
      local r = math.min(was - to, held)
      held = math.max(held - (was - to), 0)
      if r <= 0 then
        -- nothing of the charge to give back
      elseif a == 'fixed' then -- p2 window ms
        local pttl = redis.call('PTTL', key)
        if pttl > 0 and math.abs(now + pttl * 1000 - e) < p2 * 500 then
          local v = tonumber(redis.call('GET', key)) or 0
          r = math.min(r, v)
          if r >= v then
            redis.call('DEL', key) -- an emptied window is no window: the next charge starts one
          elseif r > 0 then
            redis.call('DECRBY', key, r)
          end
        end
      elseif a == 'sliding' then -- p3 bucket width ms
        local field = int(math.floor(e / 1000 / p3))
        local v = tonumber(redis.call('HGET', key, field))
        if v and v > 0 then redis.call('HINCRBY', key, field, -math.min(r, v)) end
      elseif a == 'log' then -- p2 window ms
        if e > now - p2 * 1000 then log_drop(key, e, r) end
      else -- a bucket: p1 interval µs
        local tat = tonumber(redis.call('GET', key))
        if tat and tat > now then
          local part = math.max(math.min(r * p1, e - now), 0)
          local nt = math.max(tat - part, now)
          e = e - part
          if nt > now then
            redis.call('SET', key, int(nt), 'PX', int(math.ceil((nt - now) / 1000)))
          else
            redis.call('DEL', key)
          end
        end
      end
    elseif to > was then
      local d = to - was
      if a == 'fixed' then
        local pttl = redis.call('PTTL', key)
        if pttl > 0 then
          redis.call('INCRBY', key, d)
          if math.abs(now + pttl * 1000 - e) >= p2 * 500 then held = 0 end
          e, held = now + pttl * 1000, held + d
        else
          redis.call('SET', key, d, 'PX', p2)
          e, held = now + p2 * 1000, d
        end
      elseif a == 'sliding' then -- p2 window ms, p3 width ms
        local c = math.floor(now_ms / p3)
        local o = c - p2 / p3
        local fields = redis.call('HKEYS', key)
        for j = 1, #fields do
          if tonumber(fields[j]) < o then redis.call('HDEL', key, fields[j]) end
        end
        local from = int(math.floor(e / 1000 / p3))
        local moved = math.min(held, tonumber(redis.call('HGET', key, from)) or 0)
        if moved > 0 then redis.call('HINCRBY', key, from, -moved) end
        redis.call('HINCRBY', key, int(c), moved + d)
        redis.call('PEXPIRE', key, int((c + 1) * p3 + p2 - now_ms))
        e, held = now, moved + d
      elseif a == 'log' then
        local start = now - p2 * 1000
        redis.call('ZREMRANGEBYSCORE', key, '-inf', int(start))
        local moved = 0
        if e > start then
          moved = math.min(held, redis.call('ZCOUNT', key, int(e), int(e)))
          log_drop(key, e, moved)
        end
        log_add(key, now, moved + d, p2, start)
        e, held = now, moved + d
      else -- a bucket
        local tat = math.max(tonumber(redis.call('GET', key)) or now, now) + d * p1
        redis.call('SET', key, int(tat), 'PX', int(math.ceil((tat - now) / 1000)))
        e, held = tat, held + d
      end
    end
  end
  if mode ~= 'renew' then reply[2 * i - 1], reply[2 * i] = e, held end
end
return reply
