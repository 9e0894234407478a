-- ratekit override: override(keys, args) writes, clears and reads a
-- subject's overrides (see in_force in the prelude), and keeps the index of
-- the subjects that have some. Its contract is docs/architecture.md,
-- "Overrides".
--
-- set, clear and read: KEYS[1] the subject's hash; set and clear, then the
-- limit's state key and its block key, if any, which a carry.Reset limit
-- loses. ARGV: mode, the limit's ID, and for set the override without its
-- end ("<reset> <p1> <p2> <p3> <block ms> <n1> ... <n8>"), its length (µs,
-- 0: until cleared) and how long past its end a carry.Reset limit's state
-- may live (µs). index-add, index-del, index-list: KEYS[1] the index, a
-- sorted set of subjects, each scored with the end of its last override
-- (µs; +inf: one lasts until cleared); ARGV: mode, then the subject and its
-- end (add) or the subject (del).

-- ttl sets the hash at okey to live as long as its longest override, past
-- its end by keep (µs): for ever when one lasts until cleared.
local function ttl(okey, keep)
  local all = redis.call('HGETALL', okey)
  local last = 0
  for i = 2, #all, 2 do
    local o = parse_override(all[i])
    if o and o[1] == 0 then
      redis.call('PERSIST', okey)
      return
    end
    if o then last = math.max(last, o[1]) end
  end
  if #all == 0 then return end
  local pttl = redis.call('PTTL', okey)
  if pttl > 0 then last = math.max(last, clock() + pttl * 1000 - keep) end
  redis.call('PEXPIREAT', okey, int(math.ceil((last + keep) / 1000) + 1))
end

-- lose deletes the state a carry.Reset limit had under other numbers.
local function lose(reset)
  if reset then
    for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
  end
end

local function override(keys, args)
  KEYS, ARGV, now = keys, args, nil
  local mode, okey = ARGV[1], KEYS[1]
  if mode == 'set' then
    local id, rest, length, keep = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
    local ends = 0
    if length > 0 then ends = clock() + length end
    local v = int(ends) .. ' ' .. rest
    if not parse_override(v) then return redis.error_reply('ratekit: malformed override ' .. v) end
    redis.call('HSET', okey, id, v)
    lose(string.sub(rest, 1, 1) == '1')
    ttl(okey, keep)
    return { ends }
  elseif mode == 'clear' then
    local old = redis.call('HGET', okey, ARGV[2])
    if old then
      redis.call('HDEL', okey, ARGV[2])
      local o = parse_override(old)
      lose(o and o[2])
      ttl(okey, tonumber(ARGV[3]) or 0)
    end
    return { redis.call('HLEN', okey) }
  elseif mode == 'read' then
    -- every override in force: ID, then its end (µs, 0: none) and numbers
    local all, out, t = redis.call('HGETALL', okey), {}, nil
    for i = 1, #all, 2 do
      local o = parse_override(all[i + 1])
      if o then
        t = t or clock()
        if o[1] == 0 or t < o[1] then
          out[#out + 1] = all[i]
          out[#out + 1] = int(o[1])
          for j = 1, 8 do out[#out + 1] = int(o[7][j]) end
        end
      end
    end
    return out
  elseif mode == 'index-add' then
    local score = ARGV[3]
    local old = redis.call('ZSCORE', okey, ARGV[2])
    if old and score ~= '+inf' and (old == 'inf' or tonumber(old) > tonumber(score)) then return 0 end
    return redis.call('ZADD', okey, score, ARGV[2])
  elseif mode == 'index-del' then
    return redis.call('ZREM', okey, ARGV[2])
  elseif mode == 'index-list' then
    redis.call('ZREMRANGEBYSCORE', okey, '-inf', '(' .. int(clock()))
    return redis.call('ZRANGE', okey, 0, -1)
  end
  return redis.error_reply('ratekit: unknown override mode ' .. tostring(mode))
end
