-- ratekit settle: moves an admitted call's charge after the fact, releases
-- its in-flight leases, or renews them, in one atomic call.
--
-- KEYS[1..n]  state key of limit i (block keys may follow; they are never
--             touched, so a refund never lifts a block)
-- ARGV[1]     mode: "settle" or "renew"
-- ARGV[2]     settle: the change of the charge, an integer (below 0: a
--             refund, above: an extra charge)
-- ARGV[3]     the charge's time, µs (the reserve call's reply)
-- ARGV[4]     the call's lease, '' when it holds none
-- ARGV[4+i]   limit i, as the engine's "<algorithm> <p1> <p2> <p3> <block ms>"
-- ARGV[4+n+i] limit i's end: when the charge leaves its state, µs (fixed:
--             its window's end; gcra, token, leaky: the arrival time after
--             the charge; log: the time of its extra charge; 0 for others)
--
-- Reply: settle: n integers, each limit's end as it now stands (an extra
-- charge moves it); renew: n integers, 1 where the lease is held (or the
-- limit is not inflight), 0 where it lapsed (it is not taken again).
--
-- A refund gives back only what the charge still holds: a fixed window's
-- count while the charged window lives, a sliding window's bucket while it
-- is in the window, the log entries of the charge while they are, and of a
-- bucket only the part of the charge not yet refilled; never below zero.
-- An extra charge is added to the current state, past the quota if need
-- be, but at most one quota (a bucket's burst). Suppressed and custom algorithms are left as they are.
-- store/memstore's settle.go mirrors this arithmetic.

-- It runs inside the engine's library (or script), whose spec, int and
-- log_add it uses: limit arguments are parsed once per distinct string
-- there too.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now_ms = math.floor(now / 1000)
local mode, delta, at, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local n = (#ARGV - 4) / 2
local reply = {}
for i = 1, n do
  local sp = spec(ARGV[4 + i])
  if not sp then return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[4 + i])) end
  local a, p1, p2, p3 = sp[1], sp[2], sp[3], sp[4]
  local key, e = KEYS[i], tonumber(ARGV[4 + n + i])
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
  elseif delta < 0 then
    local r = -delta
    if a == 'fixed' then -- p1 quota, p2 window ms
      local pttl = redis.call('PTTL', key)
      if pttl > 0 and math.abs(now + pttl * 1000 - e) < p2 * 500 then -- the window charged
        local v = tonumber(redis.call('GET', key)) or 0
        r = math.min(r, v)
        if r > 0 then redis.call('DECRBY', key, r) end
      end
    elseif a == 'sliding' then -- p3 bucket width ms
      local field = int(math.floor(at / 1000 / p3))
      local v = tonumber(redis.call('HGET', key, field))
      if v and v > 0 then redis.call('HINCRBY', key, field, -math.min(r, v)) end
    elseif a == 'log' then
      -- the charge's entries while in the window: those of its extra charge
      -- (at e) first, then those of the call (at at); at one time, those
      -- with the highest numbers, so the next number there stays unused
      -- (members at one time s are s:1 .. s:k, see the engine's zadd)
      for _, s in ipairs({ e, at }) do
        if r > 0 and s > now - p2 * 1000 then
          local k = redis.call('ZCOUNT', key, int(s), int(s))
          local names = {}
          for j = k, math.max(k - r + 1, 1), -1 do
            names[#names + 1] = int(s) .. ':' .. int(j)
            if #names >= 2000 or j == math.max(k - r + 1, 1) then
              r = r - redis.call('ZREM', key, unpack(names))
              names = {}
            end
          end
        end
      end
    elseif a == 'gcra' or a == 'token' or a == 'leaky' then -- p1 interval µs
      local tat = tonumber(redis.call('GET', key))
      if tat and tat > now then
        local held = math.max(math.min(r * p1, e - now), 0)
        local nt = math.max(tat - held, now)
        e = e - held
        if nt > now then
          redis.call('SET', key, int(nt), 'PX', int(math.ceil((nt - now) / 1000)))
        else
          redis.call('DEL', key)
        end
      end
    end
  elseif delta > 0 then
    -- an extra charge counts at most one quota (burst): no limit owes more
    if a == 'gcra' or a == 'token' or a == 'leaky' then delta = math.min(delta, p2) else delta = math.min(delta, p1) end
    if a == 'fixed' then
      local pttl = redis.call('PTTL', key)
      if pttl > 0 then
        redis.call('INCRBY', key, delta)
        e = now + pttl * 1000
      else
        redis.call('SET', key, delta, 'PX', p2)
        e = now + p2 * 1000
      end
    elseif a == 'sliding' then -- p2 window ms, p3 width ms
      local c = math.floor(now_ms / p3)
      local o = c - p2 / p3
      local fields = redis.call('HKEYS', key)
      for j = 1, #fields do
        if tonumber(fields[j]) < o then redis.call('HDEL', key, fields[j]) end
      end
      redis.call('HINCRBY', key, int(c), delta)
      redis.call('PEXPIRE', key, int((c + 1) * p3 + p2 - now_ms))
    elseif a == 'log' then
      log_add(key, now, delta, p2, now - p2 * 1000)
      e = now
    elseif a == 'gcra' or a == 'token' or a == 'leaky' then
      local tat = math.max(tonumber(redis.call('GET', key)) or now, now) + delta * p1
      redis.call('SET', key, int(tat), 'PX', int(math.ceil((tat - now) / 1000)))
      e = tat
    end
  end
  reply[i] = reply[i] or e
end
return reply
