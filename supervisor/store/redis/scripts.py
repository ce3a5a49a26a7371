"""The Lua scripts that make a relay's shipping and an operator's decision atomic in Redis.

`SHIP` appends a run of lines of one session's file to its event stream, exactly once: it skips
lines before the session's position (`next`, a byte offset of generation `gen`) and refuses a
run that starts after it (a gap: the relay must go back), so a relay that crashed, restarted,
lost its state or found Redis restarted with less than it had shipped converges on one copy of
every line, in order. Keys only written or read by the role that runs the script are declared;
a key the role may only read (the control stream, for a relay; the position hash, for an
operator) is passed as an argument, so the script needs no more rights than the ACL of
`layout.Layout.acl_rules` gives. The `#!lua` line makes Redis refuse a script as a whole when it
is out of memory, instead of failing half-way through one.

`RANGE` is every operator reader's XRANGE: what another host's relay wrote is read bounded.
"""

SHIP = r"""#!lua
-- KEYS: 1 event stream, 2 host's position hash, 3 activity stream, 4 hosts set
-- ARGV: 1 host, 2 session id, 3 control stream key, 4 generation, 5 from, 6 to,
--       7 activity maxlen, then per line: offset, seq ('' if none), reason ('' if the line
--       is whole), bytes, size
local pos = redis.call('HGET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[4], ARGV[1])  -- every run: the host registry heals if it was lost
local gen = tonumber(ARGV[4])
local first, upto = tonumber(ARGV[5]), tonumber(ARGV[6])
local sgen, nxt, seq, ctl0
local moved = false
if pos then
  local g, n, s, c = string.match(pos, '^(%d+) (%d+) (%d+) (%S+)$')
  sgen, nxt, seq, ctl0 = tonumber(g), tonumber(n), tonumber(s), c
else
  -- registration: decisions already in the control stream were for an earlier session
  local last = redis.call('XREVRANGE', ARGV[3], '+', '-', 'COUNT', 1)
  ctl0 = (#last > 0) and last[1][1] or '0-0'
  sgen, nxt, seq = gen, 0, 0
  if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('XADD', KEYS[1], '*', 'r', gen)
    moved = true
  end
end
if gen < sgen then
  return {'gen', sgen, nxt, 0, ctl0}
end
if gen > sgen then
  redis.call('XADD', KEYS[1], '*', 'r', gen)
  sgen, nxt, seq, moved = gen, 0, 0, true
end
if first > nxt then
  redis.call('HSET', KEYS[2], ARGV[2], sgen .. ' ' .. nxt .. ' ' .. seq .. ' ' .. ctl0)
  return {'gap', sgen, nxt, 0, ctl0}
end
local shipped = 0
for i = 8, #ARGV, 5 do
  local off = tonumber(ARGV[i])
  if off >= nxt then
    if ARGV[i + 2] == '' then
      redis.call('XADD', KEYS[1], '*', 'o', off, 'l', ARGV[i + 3])
    else
      redis.call('XADD', KEYS[1], '*', 'o', off, 'b', ARGV[i + 2], 'l', ARGV[i + 3],
                 'z', ARGV[i + 4])
    end
    if ARGV[i + 1] ~= '' then seq = tonumber(ARGV[i + 1]) end
    shipped = shipped + 1
  end
end
if upto > nxt then nxt = upto end
redis.call('HSET', KEYS[2], ARGV[2], sgen .. ' ' .. nxt .. ' ' .. seq .. ' ' .. ctl0)
if shipped > 0 or moved then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[7], '*', 's', ARGV[1] .. '/' .. ARGV[2],
             'k', 'e')
end
return {'ok', sgen, nxt, shipped, ctl0}
"""

FORGET = r"""#!lua
-- The session's directory vanished on its host: empty its stream, drop its position, say so
-- (XTRIM, not DEL: a relay has no DEL, which would let it delete keys it may write, such as
-- the host registry).
-- KEYS: 1 event stream, 2 host's position hash, 3 activity stream
-- ARGV: 1 host, 2 session id, 3 activity maxlen
redis.call('XTRIM', KEYS[1], 'MAXLEN', 0)
if redis.call('HDEL', KEYS[2], ARGV[2]) == 1 then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 's', ARGV[1] .. '/' .. ARGV[2],
             'k', 'g')
end
return 1
"""

DECIDE = r"""#!lua
-- An operator's decision for a registered session, numbered in its control stream.
-- KEYS: 1 control stream, 2 activity stream
-- ARGV: 1 host's position hash, 2 session id, 3 session name, 4 ts, 5 the decision's JSON
--       fields after the common ones (starting with a comma), 6 activity maxlen
if redis.call('HEXISTS', ARGV[1], ARGV[2]) == 0 then
  return redis.error_reply('NOSESSION no such session')
end
local n = redis.call('XLEN', KEYS[1]) + 1
local line = '{"v":1,"seq":' .. n .. ',"ts":' .. ARGV[4] .. ARGV[5] .. '}'
local id = redis.call('XADD', KEYS[1], '*', 'l', line)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*', 's', ARGV[3], 'k', 'c')
return {id, line}
"""

RANGE = r"""#!lua flags=no-writes
-- A page of one stream, bounded in bytes whatever its writer put there: a relay (another
-- host's credentials) may add entries of hundreds of megabytes, which XRANGE hands over whole.
-- At most ARGV[4] entries; an entry holding a value over ARGV[5] bytes, or more than 8 fields,
-- is handed as the first ARGV[8] bytes of its line with why ('b') and its size ('z'), as a
-- relay ships a line too long to read; the page ends once ARGV[6] bytes are in it (never before
-- its first entry).
-- KEYS: none (the stream is one the operator may only read: an argument, see above)
-- ARGV: 1 'XRANGE' or 'XREVRANGE', 2 start, 3 end, 4 count, 5 largest value, 6 bytes a page,
--       7 the stream, 8 bytes of a line's head
-- Returns {more (1: the page ended on its bytes, not its count), entries}.
if ARGV[1] ~= 'XRANGE' and ARGV[1] ~= 'XREVRANGE' then
  return redis.error_reply('ERR RANGE reads with XRANGE or XREVRANGE')
end
local got = redis.call(ARGV[1], ARGV[7], ARGV[2], ARGV[3], 'COUNT', ARGV[4])
local cap, budget = tonumber(ARGV[5]), tonumber(ARGV[6])
local out, total = {}, 0
for i = 1, #got do
  local id, fields = got[i][1], got[i][2]
  local size, line, whole = 0, '', #fields <= 16
  for j = 1, #fields do
    local n = #fields[j]
    size = size + n
    if n > cap then whole = false end
    if j % 2 == 0 and fields[j - 1] == 'l' then line = fields[j] end
  end
  if not whole then
    local head = string.sub(line, 1, tonumber(ARGV[8]))
    fields = {'l', head, 'b', 'an entry of ' .. size .. ' bytes in the store: too large to read',
              'z', size}
    size = #head + 64
  end
  if total > 0 and total + size > budget then
    return {1, out}
  end
  total = total + size
  out[#out + 1] = {id, fields}
end
return {0, out}
"""
