-- copy_write.lua (with the lib.lua helpers it uses)
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
-- The blob field of a channel version: len(channel) ":" channel version. O(1).
local function blob_field(channel, version)
  return decimal(string.len(channel)) .. ':' .. channel .. version
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
-- Checks the shard's index of every checkpoint (sb .. 'all'), which no reader can tell lost from empty by
-- itself: every thread the shard's registry lists has a checkpoint, so an entry in it (a thread left
-- without checkpoints leaves the registry). Gone while the registry lists a thread other than enct (nil:
-- none to leave out), it was lost; so was a registry without its marker member "". Returns an error reply
-- (DATALOSS), or nil and whether the index exists. O(1), and O(log threads) when the index is gone.
local function check_shard_index(sb, enct)
  if redis.call('EXISTS', sb .. 'all') == 1 then return nil, true end
  local registry = sb .. 'threads'
  local registered = redis.call('ZCARD', registry)
  if registered == 0 then return dataloss('thread registry ' .. registry) end
  if enct and redis.call('ZSCORE', registry, enct) then registered = registered - 1 end
  if registered > 1 then return dataloss('shard index ' .. sb .. 'all') end
  return nil, false
end
-- Moves a thread's lease to now + ttl (ttl 0: no expiry) on its head and in the
-- registry. O(log threads).
local function touch(sb, enct, ttl, now)
  local exp = '0'
  if ttl > 0 then exp = string.format('%d', now + ttl) end -- formatted once, not by each redis.call
  redis.call('HSET', sb .. 't:' .. enct, 'exp', exp)
  redis.call('ZADD', sb .. 'threads', exp, enct)
end
-- Makes a thread's generation invisible at once: its head and registry entry go,
-- and the generation is queued for reclaim from time 'due'. O(log threads).
local function retire(sb, enct, gen, due)
  if gen then redis.call('ZADD', sb .. 'gc', due, enct .. '\0' .. gen) end
  redis.call('DEL', sb .. 't:' .. enct)
  redis.call('ZREM', sb .. 'threads', enct)
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
-- copy_write.lua: one bounded step of CopyThread on the target side. The copy is written into a staging
-- generation that no reader sees (it is not the target's head generation), and becomes the target's thread
-- at once at "commit". A staging generation is queued for reclaim from a deadline that every step moves
-- on, so an abandoned copy is reclaimed by the sweeps.
-- KEYS[1] thread head hash of the target
-- KEYS[2] thread registry zset of the target's shard
-- KEYS[3] index zset of every checkpoint of the target's shard
-- KEYS[4] reclaim queue zset of the target's shard
-- KEYS[5] event stream of the target thread
-- KEYS[6] event feed of the target's shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded target thread
-- ARGV[3] the staging generation
-- ARGV[4] phase: "begin", "cps", "blobs", "check", "commit" or "abort". A namespace's "cps" pages come
--         before its "blobs" pages, then one "check": the staging namespace's need set holds the blob fields
--         the copied checkpoints point to that no "blobs" page wrote yet, and "check" refuses a namespace
--         whose copied checkpoints lack values (the source's were reclaimed during the copy: a Prune or
--         DeleteForRuns deleted checkpoints the copy had taken, or a re-put replaced them).
-- ARGV[5] how long an idle staging generation waits before it is reclaimed, in milliseconds
-- ARGV[6] cps, blobs and check: encoded namespace; commit: TTL in milliseconds (0: none)
-- ARGV[7 ..] cps: records id, n, then n checkpoint field/value pairs (a "r" field names the run index in
--            the target's shard); blobs: field/value pairs; commit: the number of checkpoints copied,
--            then the event spec (stream maxlen, feed maxlen, e, then e event field/value pairs)
-- Returns: 1. Errors, before anything is written: "EXISTS ..." (begin, commit) when the target thread
--          has checkpoints; "DATALOSS ..." when its head or registry entry is missing, or (cps) the
--          shard's index of every checkpoint is gone while the shard's registry lists a thread; "MISSING
--          ..." (check) when a copied checkpoint's value was not copied; "NOTFOUND ..." (every phase but
--          begin) when the staging generation left the reclaim queue or is due in it (a copy idle for
--          longer than ARGV[5]); "BADARGS ..." (a client bug) for a "cps" page of no checkpoints, values of
--          a namespace no "cps" page wrote, or a commit of a copy that copied no checkpoint (the client
--          aborts it instead).
-- Work bound: O(size of the page given).
local sb, enct, gen, phase = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = now_ms()
local entry = enct .. '\0' .. gen
local grace = tonumber(ARGV[5])
if phase == 'abort' then
  redis.call('ZADD', KEYS[4], now, entry)
  return 1
end
-- Every phase but begin: still a staging generation the queue knows, and not yet due (a reclaim may have
-- begun on a due one).
if phase ~= 'begin' then
  local due = redis.call('ZSCORE', KEYS[4], entry)
  if not due or tonumber(due) <= now then return redis.error_reply('NOTFOUND staging generation was reclaimed') end
end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
if phase == 'begin' or phase == 'commit' then
  -- A copy that copied no checkpoint commits nothing: the target would be a thread without namespaces.
  if phase == 'commit' and redis.call('EXISTS', gb .. ':ns') == 0 then
    return redis.error_reply('BADARGS commit of a copy without checkpoints')
  end
  local old, state, detail = thread_state(sb, enct, now)
  if state == 'lost' then return dataloss(detail) end
  if state == 'live' then
    if phase == 'commit' then redis.call('ZADD', KEYS[4], now, entry) end
    return redis.error_reply('EXISTS target thread already has checkpoints')
  end
  if phase == 'begin' then
    redis.call('ZADD', KEYS[4], now + grace, entry)
    return 1
  end
  if state == 'expired' then retire(sb, enct, old, now) end
  redis.call('HSET', KEYS[1], 'g', gen)
  touch(sb, enct, tonumber(ARGV[6]), now)
  redis.call('ZREM', KEYS[4], entry)
  local maxlen, feedmaxlen, event = event_spec(8)
  if maxlen ~= '0' then
    event[#event + 1] = 'n'
    event[#event + 1] = ARGV[7]
    publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, unpack(event))
    local ttl = tonumber(ARGV[6])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[5], ttl) else redis.call('PERSIST', KEYS[5]) end
  end
  return 1
end
local encns = ARGV[6]
local nb = gb .. ':n:' .. encns
local need = nb .. ':need'
if phase == 'cps' then
  -- A page names its namespace in the namespace set, and writes its index: at least one checkpoint.
  if #ARGV < 8 then return redis.error_reply('BADARGS a page of no checkpoints') end
  -- A shard index lost while the shard has threads would be rebuilt short by this page.
  local lost = check_shard_index(sb, enct)
  if lost then return lost end
elseif phase == 'blobs' and redis.call('EXISTS', nb .. ':idx') == 0 then
  -- Values only for a namespace whose checkpoints were copied: the namespace set names only those.
  return redis.error_reply('BADARGS values of a namespace without copied checkpoints')
end
redis.call('ZADD', KEYS[4], now + grace, entry)
if phase == 'check' then
  local f = redis.call('SRANDMEMBER', need)
  if f then return redis.error_reply('MISSING value ' .. f .. ' of a copied checkpoint in ' .. nb) end
  return 1
end
if phase == 'blobs' then
  local fv, fields = {}, {}
  for i = 7, #ARGV do fv[#fv + 1] = ARGV[i] end
  for i = 1, #fv, 2 do fields[#fields + 1] = fv[i] end
  if #fv > 0 then
    chunked('HSET', nb .. ':blobs', fv, 1000)
    chunked('SREM', need, fields, 1000)
  end
  return 1
end
redis.call('SADD', gb .. ':ns', encns)
local i = 7
while i <= #ARGV do
  local id, n = ARGV[i], tonumber(ARGV[i + 1])
  local fv = {}
  for j = i + 2, i + 1 + 2 * n do fv[#fv + 1] = ARGV[j] end
  i = i + 2 + 2 * n
  local cp = nb .. ':cp:' .. id
  local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
  redis.call('DEL', cp)
  chunked('HSET', cp, fv, 1000)
  redis.call('ZADD', nb .. ':idx', '0', id)
  redis.call('ZADD', gb .. ':idx', '0', id .. '\0' .. encns)
  redis.call('ZADD', KEYS[3], '0', member)
  local run = redis.call('HGET', cp, 'r')
  if run then redis.call('SADD', run, member) end
  local fields = {}
  for j = 1, #fv, 2 do
    local f = fv[j]
    if string.sub(f, 1, 2) == 'c:' then fields[#fields + 1] = blob_field(string.sub(f, 3), fv[j + 1]) end
  end
  if #fields > 0 then chunked('SADD', need, fields, 1000) end
end
return 1
