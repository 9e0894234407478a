-- ratekit override: override(keys, args) writes, clears and reads a
-- subject's overrides (see in_force in the prelude), and keeps the index of
-- the subjects that have some. Its contract is docs/architecture.md,
-- "Overrides".
--
-- set and clear: KEYS the subject's list of overrides (a hash: limit ID to
-- the override's end, µs, 0: none), then the limit's override key, state
-- key and block key; ARGV: mode, the limit's ID, and for set the override
-- ("<reset> <p1> <p2> <p3> <block ms> <n1> ... <n8>"), its length (µs, 0:
-- until cleared) and how long a state of the limit may live (µs). A
-- carry.Reset limit loses its state to both. read: KEYS
-- the list, then the override keys of the limits asked about; ARGV: mode,
-- then their IDs. index-add, index-del, index-list: KEYS the index, a
-- sorted set of subjects, each scored with the end of its latest override
-- (µs; +inf: one lasts until cleared); ARGV: mode, then the subject and its
-- end (add) or the subject (del).

-- listed sets the list at lkey to live as long as its longest override
-- (through the millisecond it ends at, one past the override key's last:
-- an expiry at the current millisecond would delete the list at once, as
-- PEXPIREAT does with a time not after now): for ever once one lasts until
-- cleared.
local function listed(lkey)
  local all = redis.call('HVALS', lkey)
  local last = 0
  for i = 1, #all do
    local e = tonumber(all[i]) or 0
    if e == 0 then
      redis.call('PERSIST', lkey)
      return
    end
    last = math.max(last, e)
  end
  if #all > 0 then redis.call('PEXPIREAT', lkey, int(last / 1000)) end
end

-- indexed sets the index at ikey to live as long as its latest entry:
-- for ever once one lasts until cleared.
local function indexed(ikey)
  local last = redis.call('ZRANGE', ikey, -1, -1, 'WITHSCORES')
  if #last == 0 then return end
  if last[2] == 'inf' then
    redis.call('PERSIST', ikey)
  else
    redis.call('PEXPIREAT', ikey, int(tonumber(last[2]) / 1000))
  end
end

local function override(keys, args)
  KEYS, ARGV, now = keys, args, nil
  local mode = ARGV[1]
  if mode == 'set' or mode == 'clear' then
    local lkey, okey, id = KEYS[1], KEYS[2], ARGV[2]
    local old = redis.call('GET', okey)
    local reset = old and string.sub(old, 1, 1) == '1'
    if mode == 'set' then
      local v, length, keep = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
      if not parse_override(v) then return redis.error_reply('ratekit: malformed override ' .. v) end
      reset = reset or string.sub(v, 1, 1) == '1'
      local ends = 0
      if length > 0 then
        -- it ends at the millisecond ends: its key lives through the one
        -- before, whose PTTL reads 0; a carry.Reset limit's names its end
        -- and lives on for keep (µs), as long as a state made under it, for
        -- the decision that finds it ended to delete that state
        ends = (math.floor(clock() / 1000) + math.ceil(length / 1000)) * 1000
        local last = ends / 1000 - 1
        if string.sub(v, 1, 1) == '1' then
          v = v .. ' ' .. int(ends)
          last = math.ceil((ends + keep) / 1000)
        end
        redis.call('SET', okey, v, 'PXAT', int(last))
      else
        redis.call('SET', okey, v)
      end
      redis.call('HSET', lkey, id, int(ends))
      if reset then redis.call('DEL', KEYS[3], KEYS[4]) end
      listed(lkey)
      return { ends }
    end
    if old then
      redis.call('DEL', okey)
      if reset then redis.call('DEL', KEYS[3], KEYS[4]) end
    end
    redis.call('HDEL', lkey, id)
    listed(lkey)
    return { redis.call('HLEN', lkey) }
  elseif mode == 'read' then
    -- each override in force of the limits asked about: its ID, its end
    -- (µs, 0: none) and its numbers
    local out = {}
    local vals = redis.call('MGET', unpack(KEYS, 2))
    for i = 1, #KEYS - 1 do
      local o = vals[i] and parse_override(vals[i])
      if o and o[1] > 0 and clock() >= o[1] then o = false end -- a carry.Reset limit's, ended
      if o then
        out[#out + 1] = ARGV[i + 1]
        out[#out + 1] = tostring(redis.call('HGET', KEYS[1], ARGV[i + 1]) or '0')
        for j = 1, 8 do out[#out + 1] = int(o[7][j]) end
      end
    end
    return out
  elseif mode == 'index-add' then
    local score = ARGV[3]
    local old = redis.call('ZSCORE', KEYS[1], ARGV[2])
    if not (old and score ~= '+inf' and (old == 'inf' or tonumber(old) > tonumber(score))) then
      redis.call('ZADD', KEYS[1], score, ARGV[2])
    end
    indexed(KEYS[1])
    return 0
  elseif mode == 'index-del' then
    redis.call('ZREM', KEYS[1], ARGV[2])
    indexed(KEYS[1])
    return 0
  elseif mode == 'index-list' then
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. int(clock()))
    return redis.call('ZRANGE', KEYS[1], 0, -1)
  end
  return redis.error_reply('ratekit: unknown override mode ' .. tostring(mode))
end
