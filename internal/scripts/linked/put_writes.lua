-- put_writes.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
-- Calls cmd on key with the first n items of list (all of them when n is nil) as arguments, at most step
-- at a time (Lua's unpack is limited to a few thousand values), and concatenates table replies. O(n).
local function chunked(cmd, key, list, step, n)
  n = n or #list
  if n <= step then return redis.call(cmd, key, unpack(list, 1, n)) end
  local out = {}
  for i = 1, n, step do
    local last = math.min(i + step - 1, n)
    local r = redis.call(cmd, key, unpack(list, i, last))
    if type(r) == 'table' then
      for j = 1, #r do out[#out + 1] = r[j] end
    end
  end
  return out
end
-- n, an integer >= 0, in decimal. Below 100 by string.char: Lua writes a number with sprintf("%.14g"),
-- which costs more than the rest of most callers (a blob field, an event field). O(1).
local function decimal(n)
  if n < 10 then return string.char(48 + n) end
  if n < 100 then
    local u = n % 10
    return string.char(48 + (n - u) / 10, 48 + u)
  end
  return string.format('%d', n)
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
-- Moves a thread's lease to now + ttl (ttl 0: no expiry) on its head and in the
-- registry. O(log threads).
local function touch(sb, enct, ttl, now)
  local exp = '0'
  if ttl > 0 then exp = string.format('%d', now + ttl) end -- formatted once, not by each redis.call
  redis.call('HSET', sb .. 't:' .. enct, 'exp', exp)
  redis.call('ZADD', sb .. 'threads', exp, enct)
end
-- The key of the pending writes a PutWrites stored before their checkpoint exists (put_writes.lua), and
-- the member of the shard's registry of such keys (sb .. 'early', score: the time from which they may be
-- reclaimed). O(1).
local function early_key(sb, enct, encns, id)
  return sb .. 't:' .. enct .. ':early:' .. encns .. ':' .. id
end
local function early_member(enct, encns, id)
  return enct .. '\0' .. encns .. '\0' .. id
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
-- put_writes.lua: stores the pending writes of one task against one checkpoint, renews the thread's lease,
-- and announces them, atomically.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] event stream of the thread
-- KEYS[4] event feed of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id
-- ARGV[5] TTL in milliseconds, 0 to keep forever
-- ARGV[6] the largest write value to copy into the event, in bytes; -1 for none
-- ARGV[7] the most values to copy into the event
-- ARGV[8] the most bytes of values to copy into the event, all values together (values past either
--         bound are left out of the event; its "ch" field still names every channel written)
-- ARGV[9] call token: a re-sent call (same token as the checkpoint's field "ow") changes nothing
-- ARGV[10] stream maxlen (0 or less: no event), ARGV[11] feed maxlen
-- ARGV[12] task ID (the event's "task")
-- ARGV[13] e, then e more event field/value pairs: the trace context of the writing span (traceparent, and
--          tracestate when it has one; e is 0 without a span context)
-- ARGV[14 + 2e ..] quadruples: field, value, mode, channel; the value is the write's pack(channel, task path, stored
--            value), so it starts with len(channel) ":" channel; mode "o" overwrites (special channels),
--            "n" inserts only if the field is absent (regular writes: idempotent)
-- Returns: the number of writes stored. Writes to a checkpoint that is not stored (its thread may not exist
-- yet) are kept under its early key until its Put takes them (or for 10 minutes). Errors, raised before
-- anything is written: "DATALOSS ..." when the thread's head (while its
-- registry entry exists), or an indexed checkpoint's hash, is missing; "BADARGS ..." when the arguments
-- after the trace context are not whole quadruples (a client bug).
-- The event (docs/storage-format.md, "Events"; built here, its fields are constants of the script): t "writes",
-- th, ns, id and task, the channels of the writes stored (field "ch": len ":" channel, repeated), the trace
-- context pairs of ARGV[13] and, within the value bounds, their stored values ("v:" position); no write
-- stored, no event.
-- Work bound: O(number of writes).
local sb, enct, encns, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl = 0 -- tonumber costs a strtod (about 1,300 instructions): no TTL, "0", needs none
if ARGV[5] ~= '0' then ttl = tonumber(ARGV[5]) end
local bound, maxvalues, maxbytes = -1, 0, 0
if ARGV[6] ~= '-1' then bound, maxvalues, maxbytes = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]) end
-- The clock is read only when needed: with a TTL to renew, once here; else only if the thread has a
-- lease to check (thread_state calls now_ms then). A write judges the thread from its head, as reads
-- do: the registry entry is an index that the check reports.
local now = ttl > 0 and now_ms() or now_ms -- a number, or the function (only the lease check calls it)
local gen, state, detail = thread_state(sb, enct, now, true, KEYS[1])
if state == 'lost' then return dataloss(detail) end
-- Writes to a checkpoint not stored yet (LangGraph's runtime sends a step's writes while the Put of its
-- checkpoint is under way) go to the early key of that checkpoint id, which the Put takes over
-- (docs/storage-format.md, "Pending writes before their checkpoint").
local early = state ~= 'live'
local cp
if not early then cp = sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns .. ':cp:' .. id end
local maxlen, feedmaxlen = event_bounds(10)
local ntrace = tonumber(ARGV[13])
if not ntrace or ntrace < 0 or ntrace > 2 then return redis.error_reply('BADARGS put_writes trace context count ' .. tostring(ARGV[13])) end
local at = 14 + 2 * ntrace
-- The event's trace context pairs, then its values ("v:" position, value), when it carries any.
local vals, nv = {}, 0
if ntrace > 0 then vals, nv = {unpack(ARGV, 14, at - 1)}, 2 * ntrace end
-- One HMGET reads the checkpoint's v and ow and whether the fields of the first 998 writes exist (those of
-- any later ones in chunks of 1,000); then one HSET stores the writes and the call token.
local nw = (#ARGV - at + 1) / 4
if nw % 1 ~= 0 then return redis.error_reply('BADARGS put_writes arguments after the trace context are not quadruples') end
local first = nw < 998 and nw or 998
local q = {'v', 'ow', unpack(ARGV, at, at + first - 1)} -- sized once; its items are set below
for w = 0, first - 1 do q[w + 3] = ARGV[at + 4 * w] end
local have
if not early then
  have = redis.call('HMGET', cp, unpack(q))
  if not have[1] then
    if redis.call('ZSCORE', sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns .. ':idx', id) then
      return dataloss('checkpoint hash ' .. cp)
    end
    early = true
  end
end
if early then
  cp = early_key(sb, enct, encns, id)
  have = redis.call('HMGET', cp, unpack(q)) -- no "v" there: the other fields tell
end

if have[2] == ARGV[9] then return 0 end
if nw > first then
  local rest = {}
  for w = first, nw - 1 do rest[w - first + 1] = ARGV[at + 4 * w] end
  rest = chunked('HMGET', cp, rest, 1000)
  for w = first, nw - 1 do have[w + 3] = rest[w - first + 1] end
end
-- The event's "ch" field lists the channels of the writes stored: a write's value starts with
-- len(channel) ":" channel (its pack), taken from there rather than built anew.
local set, chs
if nw == first then -- sized once (their surplus items are never read): unpack copies references
  set, chs = {'ow', ARGV[9], unpack(ARGV, at, at + 2 * nw - 1)}, {unpack(ARGV, at, at + nw - 1)}
else
  set, chs = {'ow', ARGV[9]}, {}
end
local nset, taken, nch = 2, {}, 0
local written, copied = 0, 0
for w = 0, nw - 1 do
  local i = at + 4 * w
  local f = ARGV[i]
  if ARGV[i + 2] == 'o' or not (have[w + 3] or taken[f]) then
    taken[f] = true
    local v = ARGV[i + 1]
    set[nset + 1], set[nset + 2] = f, v
    nset = nset + 2
    written = written + 1
    local l = #ARGV[i + 3]
    nch = nch + 1
    chs[nch] = string.sub(v, 1, l + (l < 10 and 2 or l < 100 and 3 or #decimal(l) + 1))
    local size = #v
    if bound >= 0 and copied < maxvalues and size <= bound and size <= maxbytes then
      copied = copied + 1
      maxbytes = maxbytes - size
      vals[nv + 1], vals[nv + 2] = 'v:' .. decimal(w), v
      nv = nv + 2
    end
  end
end
chunked('HSET', cp, set, 1000, nset)
if early then
  -- Owned by the shard's registry of early writes until the Put takes them, or reclaimed from the time
  -- it gives (10 minutes on): the checkpoint never came.
  redis.call('ZADD', sb .. 'early', string.format('%d', now_ms() + 600000), early_member(enct, encns, id))
elseif ttl > 0 then
  touch(sb, enct, ttl, now)
end
if written > 0 and maxlen ~= '0' then
  -- The event's fields go to publish as arguments: no table of them to build and unpack.
  publish(KEYS[3], KEYS[4], maxlen, feedmaxlen, 't', 'writes', 'th', enct, 'ns', encns, 'id', id, 'task', ARGV[12],
    'ch', table.concat(chs, '', 1, nch), unpack(vals, 1, nv))
  if early and state ~= 'live' then
    -- The stream of a thread that does not exist yet lives as long as the early writes, unless it has a
    -- TTL already (a deleted thread's); the Put that creates the thread makes it the thread's.
    if redis.call('PTTL', KEYS[3]) == -1 then redis.call('PEXPIRE', KEYS[3], 600000) end
  elseif ttl > 0 then
    redis.call('PEXPIRE', KEYS[3], ARGV[5])
  end
end
return written
