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
-- Each algorithm holds its own rules (settle and renew in its table; see
-- lua/engine.lua), on these: a limit holds at most one quota (a bucket's
-- burst) of a call's charge (the prelude's moves). A refund gives back only
-- what the limit holds of the charge (held), as far as its state still has
-- it, never below zero. An extra charge is added past the quota if need be,
-- so that the charge sits in one place. An algorithm without settle
-- (suppressed, custom ones) is left as it is; without renew, it holds no
-- lease. internal/algo holds the same rules in Go, one file per algorithm.
--
-- settle(keys, args) runs inside the engine's library (or a script of the
-- prelude and the algorithms), whose parsing it uses: limit arguments are
-- parsed once per distinct string there too.

local function settle(keys, args)
  start(keys, args)
  local mode, was, to = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
  lease = ARGV[4]
  if lease == '' then lease = nil end
  local n = (#ARGV - 4) / 3
  local reply = {}
  for i = 1, n do
    local sp = spec(ARGV[4 + i])
    if not sp then return redis.error_reply('ratekit: malformed limit ' .. tostring(ARGV[4 + i])) end
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
