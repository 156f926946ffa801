-- delete_thread.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
-- Splits s on the byte "\0" (binary safe). O(#s).
local function split0(s)
  local out, from = {}, 1
  while true do
    local at = string.find(s, '\0', from, true)
    if not at then
      out[#out + 1] = string.sub(s, from)
      return out
    end
    out[#out + 1] = string.sub(s, from, at - 1)
    from = at + 1
  end
end
-- Lets a script that frees memory run on a full Redis. Redis refuses a script's first write that may grow
-- memory (ZADD, SADD, XADD...) while it is over maxmemory, and no write after the script's first one; so a
-- script whose every write is checked beforehand is refused whole or runs whole. A script that deletes
-- (DeleteThread, Prune, DeleteForRuns, reclaim, Sweep) calls this first: its first write is then the DEL of
-- a key of its shard that never exists, which changes nothing and is not replicated, and what it adds while
-- it frees (a reclaim queue entry, a keep set, an event) is allowed. O(1).
local function may_run_full(sb)
  redis.call('DEL', sb .. 'never')
end
-- The error every read returns for data that should exist and does not.
local function dataloss(what)
  return redis.error_reply('DATALOSS ' .. what)
end
-- The server's clock in Unix milliseconds. O(1).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The state of a thread from its head hash and its registry entry. O(log threads). now is the time
-- in ms, or a function giving it (called only when needed). With reading, a thread whose head exists
-- is judged from its head alone. head, when given, is the head's key (a script's KEYS[1]: not built again).
-- Returns gen (or nil), state, detail: state is
--   'live'    the thread exists: gen is its generation;
--   'none'    no such thread;
--   'expired' its lease ran out: readers see no thread, writers start a new generation
--             (gen, when the head still exists, is the generation to retire);
--   'lost'    its head or its registry entry is missing while the other exists, or the
--             shard's registry lost its marker member "" (the whole zset was lost): detail
--             names the missing key.
local function thread_state(sb, enct, now, reading, head)
  head = head or sb .. 't:' .. enct
  local h = redis.call('HMGET', head, 'g', 'exp')
  if h[1] and reading then
    -- A read's answer does not depend on the registry entry (an index for listings and sweeps):
    -- reads skip it; writes and the check see its loss. A thread without a lease ("0", or no field)
    -- costs no tonumber.
    local x = h[2]
    local e = x and x ~= '0' and tonumber(x) or 0
    if e > 0 then
      if type(now) == 'function' then now = now() end
      if e <= now then return h[1], 'expired' end
    end
    return h[1], 'live'
  end
  if type(now) == 'function' then now = now() end
  local reg = redis.call('ZSCORE', sb .. 'threads', enct)
  if not h[1] then
    if not reg then
      -- The registry holds the marker member "" from the prefix's creation on (no thread is ""): a
      -- registry without it was lost whole, with the entries of threads that may exist.
      if not redis.call('ZSCORE', sb .. 'threads', '') then return nil, 'lost', 'thread registry ' .. sb .. 'threads' end
      return nil, 'none'
    end
    local e = tonumber(reg)
    if e > 0 and e <= now then return nil, 'expired' end
    return nil, 'lost', 'thread head ' .. head
  end
  local e = tonumber(h[2]) or 0
  if e > 0 and e <= now then return h[1], 'expired' end
  if not reg then return h[1], 'lost', 'registry entry of ' .. head .. ' in ' .. sb .. 'threads' end
  return h[1], 'live'
end
-- Makes a thread's generation invisible at once: its head and registry entry go,
-- and the generation is queued for reclaim from time 'due'. O(log threads).
local function retire(sb, enct, gen, due)
  if gen then redis.call('ZADD', sb .. 'gc', due, enct .. '\0' .. gen) end
  redis.call('DEL', sb .. 't:' .. enct)
  redis.call('ZREM', sb .. 'threads', enct)
end
-- Deletes one checkpoint of a generation with its entries in every index. O(log n).
local function drop_checkpoint(sb, enct, encns, gen, id)
  local gb = sb .. 't:' .. enct .. ':g:' .. gen
  local nb = gb .. ':n:' .. encns
  local cp = nb .. ':cp:' .. id
  local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
  local run = redis.call('HGET', cp, 'r')
  if run then redis.call('SREM', run, member) end
  redis.call('ZREM', nb .. ':idx', id)
  redis.call('ZREM', gb .. ':idx', id .. '\0' .. encns)
  redis.call('ZREM', sb .. 'all', member)
  return redis.call('UNLINK', cp)
end
-- Reclaims up to budget units of work of one queued generation (a unit: one
-- checkpoint dropped, or one namespace's index and values unlinked; UNLINK frees
-- large values off the main thread). Returns the units used and whether the
-- generation is fully reclaimed (its queue entry is then removed). O(budget log n).
local function reclaim_gen(sb, entry, budget)
  local parts = split0(entry)
  local enct, gen = parts[1], parts[2]
  local gb = sb .. 't:' .. enct .. ':g:' .. gen
  local used = 0
  while used < budget do
    local encns = redis.call('SRANDMEMBER', gb .. ':ns')
    if encns then
      local nb = gb .. ':n:' .. encns
      local want = budget - used
      local ids = redis.call('ZRANGE', nb .. ':idx', 0, want - 1)
      for _, id in ipairs(ids) do drop_checkpoint(sb, enct, encns, gen, id) end
      used = used + #ids
      if #ids < want then
        redis.call('UNLINK', nb .. ':idx', nb .. ':blobs', nb .. ':keep', nb .. ':pkeep', nb .. ':need')
        redis.call('SREM', gb .. ':ns', encns)
        used = used + 1
      end
    else
      -- No namespace left: entries of the thread index whose namespace was lost.
      local want = math.max(budget - used, 1)
      local rest = redis.call('ZRANGE', gb .. ':idx', 0, want - 1)
      for _, m in ipairs(rest) do
        local p = split0(m)
        drop_checkpoint(sb, enct, p[2] or '', gen, p[1])
        redis.call('ZREM', gb .. ':idx', m)
      end
      used = used + #rest + 1
      if #rest < want then
        redis.call('UNLINK', gb .. ':idx', gb .. ':ns')
        redis.call('ZREM', sb .. 'gc', entry)
        return used, true
      end
    end
  end
  return used, false
end
-- Appends one event, its field/value pairs given as the arguments after feedmaxlen (at most a few hundred
-- items: the caller bounds them; a table's or an ARGV span's passed by unpack, no table built for them), to
-- a thread's stream and to its shard's feed, each trimmed to about its maximum length (maxlen, feedmaxlen:
-- decimal strings, as event_bounds returns them: a Lua number passed to redis.call is formatted by Redis
-- with "%.17g", at a cost). A maxlen of "0" (as event_bounds returns it for any maxlen <= 0) means
-- publishing is off. Events are appended by the script that made the write they announce. O(#fields).
local function publish(stream, feed, maxlen, feedmaxlen, ...)
  if maxlen == '0' then return end
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
  redis.call('XADD', feed, 'MAXLEN', '~', feedmaxlen, '*', ...)
end
-- Reads the bounds of an event from ARGV at position i: the stream's maxlen and
-- the feed's, as the decimal strings received (publish passes them
-- to XADD as they are), but the stream's as "0", publishing off, for any number
-- <= 0, so that callers test it as a string (tonumber costs a strtod, about 1,300
-- instructions). A maxlen that is not a number raises an error, before the
-- script writes. O(1).
local function event_bounds(i)
  local maxlen = ARGV[i]
  if maxlen ~= '0' and tonumber(maxlen) <= 0 then maxlen = '0' end
  return maxlen, ARGV[i + 1]
end
-- Reads an event spec from ARGV at position i: maxlen, feed maxlen, n, then n
-- field/value pairs. Returns maxlen and feedmaxlen (event_bounds), for publish,
-- the pairs and the position after the spec. O(n).
local function event_spec(i)
  local maxlen, feedmaxlen = event_bounds(i)
  local n = tonumber(ARGV[i + 2])
  local fields
  if n <= 1000 then
    fields = {unpack(ARGV, i + 3, i + 2 + 2 * n)} -- one table of the right size
  else
    fields = {}
    for j = i + 3, i + 2 + 2 * n do fields[#fields + 1] = ARGV[j] end
  end
  return maxlen, feedmaxlen, fields, i + 3 + 2 * n
end
-- delete_thread.lua: makes a thread invisible at once (its generation retired, its head and registry entry
-- removed), announces it, and reclaims the first part of its keys; sweep.lua reclaims the rest.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] reclaim queue zset of the shard
-- KEYS[4] event stream of the thread
-- KEYS[5] event feed of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] how long the thread's event stream stays after the deletion, in milliseconds
-- ARGV[4] reclaim budget: units of work (checkpoints dropped) this call may spend
-- ARGV[5 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- Returns: {checkpoints the thread held (0 for an unknown or expired thread, which is announced by no
--          event; an unknown thread's stream without a TTL gets ARGV[3]), the reclaim queue entry of the retired generation ("" when none), 1 when that
--          generation is fully reclaimed, else 0}.
--          "DATALOSS <what>" when the thread's head is missing while its registry entry remains: the
--          registry entry is removed, but the keys of its generation cannot be found.
-- The event gets the field "n", the number of checkpoints deleted.
-- Work bound: O(log n) to retire, plus at most ARGV[4] units of reclaim.
local sb, enct, budget = ARGV[1], ARGV[2], tonumber(ARGV[4])
may_run_full(sb) -- it frees memory: it runs on a full Redis (lib.lua)
local maxlen, feedmaxlen, event = event_spec(5)
local now = now_ms()
local gen, state, detail = thread_state(sb, enct, now)
if state == 'none' then
  -- An unknown thread's stream (one emptied by an earlier version, or by hand) gets the deleted thread's TTL
  -- unless it has one: it would outlive every owner.
  if redis.call('PTTL', KEYS[4]) == -1 then redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[3])) end
  return {0, '', 1}
end
if state == 'lost' and not gen then
  retire(sb, enct, nil, now)
  return dataloss(detail)
end
local count = redis.call('ZCARD', sb .. 't:' .. enct .. ':g:' .. gen .. ':idx')
local entry = enct .. '\0' .. gen
retire(sb, enct, gen, now)
if state ~= 'expired' and count > 0 and maxlen ~= '0' then
  event[#event + 1] = 'n'
  event[#event + 1] = tostring(count)
  publish(KEYS[4], KEYS[5], maxlen, feedmaxlen, unpack(event))
  redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[3]))
end
local _, done = reclaim_gen(sb, entry, budget)
if state == 'expired' then count = 0 end
if done then return {count, entry, 1} end
return {count, entry, 0}
