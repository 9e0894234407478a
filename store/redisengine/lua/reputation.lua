-- ratekit reputation: one tenant's score in [0, 1], read or updated in one
-- atomic call; store/memstore mirrors the arithmetic (reputation.Policy).
-- KEYS[1]   the tenant's hash: s (score, '%.17g'), v (violations), g (good
--           requests), lv (last violation µs, 0: none), lu (last update µs)
-- ARGV[1]   mode: 'violation', 'good', 'get' (no write) or 'reset'
-- ARGV[2..7] policy: penalty, established, good step, slow step, hourly
--           recovery (floats in shortest form), quiet µs (integer)
-- Reply: score as a string ('%.17g': an integer reply would truncate it),
-- violations, good, last violation µs, last update µs, ttl ms (0 for a
-- tenant without state). Every write sets a TTL by the new score.

local function reputation(keys, args)
  KEYS, ARGV, now = keys, args, nil
  local key, mode = KEYS[1], ARGV[1]
  if mode == 'reset' then
    redis.call('DEL', key)
    return {}
  end

  local penalty, established = tonumber(ARGV[2]), tonumber(ARGV[3])
  local good_step, slow_step = tonumber(ARGV[4]), tonumber(ARGV[5])
  local hourly, quiet = tonumber(ARGV[6]), tonumber(ARGV[7])

  local now = clock()

  local stored = redis.call('HMGET', key, 's', 'v', 'g', 'lv', 'lu')
  local score, v, g, lv, lu = 1, 0, 0, 0, now
  if stored[1] then
    score, v, g = tonumber(stored[1]), tonumber(stored[2]), tonumber(stored[3])
    lv, lu = tonumber(stored[4]), tonumber(stored[5])
    if not (score and v and g and lv and lu) then
      return redis.error_reply('ratekit: corrupt reputation state at ' .. key)
    end
  elseif mode == 'get' then
    return { '1', 0, 0, 0, 0, 0 }
  end

  -- time-based recovery since the later of the last update and the end of the
  -- quiet period after the last violation
  if score < 1 then
    local from = math.max(lu, lv + quiet)
    if now > from then
      score = math.min(1, score + hourly * ((now - from) / 3600000000))
    end
  end

  if mode == 'get' then
    return { string.format('%.17g', score), v, g, lv, lu, math.max(redis.call('PTTL', key), 0) }
  elseif mode == 'violation' then
    local base = penalty * (1 - 0.5 * (math.min(g, established) / established))
    v = v + 1
    local esc = 1
    if v >= 10 then
      esc = 2
    elseif v >= 5 then
      esc = 1.5
    end
    local rapid = 1
    if lv > 0 and now - lv < 1000000 then rapid = 1.2 end
    score = math.max(0, score - base * esc * rapid)
    lv = now
  elseif mode == 'good' then
    g = g + 1
    if v > 0 then
      score = math.min(1, score + slow_step / v)
    else
      score = math.min(1, score + good_step)
    end
  else
    return redis.error_reply('ratekit: unknown reputation mode ' .. tostring(mode))
  end

  local ttl = 1800000
  if score < 0.1 then
    ttl = 14400000
  elseif score < 0.3 then
    ttl = 7200000
  elseif score < 0.7 then
    ttl = 3600000
  end
  if v >= 10 then ttl = ttl * 2 end

  local s = string.format('%.17g', score)
  redis.call('HSET', key, 's', s, 'v', int(v), 'g', int(g), 'lv', int(lv), 'lu', int(now))
  redis.call('PEXPIRE', key, ttl)
  return { s, v, g, lv, now, ttl }
end
