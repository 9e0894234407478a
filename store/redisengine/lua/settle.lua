-- ratekit settle: settle(keys, args) moves an admitted call's charge, and
-- releases or renews its leases, through each algorithm's settle and renew.
-- Its contract is docs/architecture.md, "The settle program".

local function settle(keys, args)
  KEYS, ARGV, now = keys, args, nil
  local mode, was, to = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
  lease = ARGV[4]
  if lease == '' then lease = nil end
  local n = (#ARGV - 4) / 3
  local reply = {}
  local sps = {}
  for i = 1, n do -- every limit well formed, for this time, before any write
    local sp = spec(ARGV[4 + i])
    if not sp then return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[4 + i])) end
    local err = stale(sp)
    if err then return err end
    sps[i] = sp
  end
  with_overrides(sps, n) -- the numbers in force
  for i = 1, n do
    local sp = sps[i]
    local algorithm, key = algorithms[sp[1]], KEYS[i]
    if mode == 'renew' then
      reply[i] = 1
      if algorithm and algorithm.renew then reply[i] = algorithm.renew(key, sp[2], sp[3], sp[4]) end
    else
      local e, held = tonumber(ARGV[4 + n + i]), tonumber(ARGV[4 + 2 * n + i])
      if algorithm and algorithm.settle then
        e, held = algorithm.settle(key, sp[2], sp[3], sp[4], was, to, e, held)
      end
      reply[2 * i - 1], reply[2 * i] = e, held
    end
  end
  return reply
end
