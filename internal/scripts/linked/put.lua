-- put.lua (with the lib.lua helpers it uses)
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
-- Checks what every live generation has: its namespace set, and the index of a
-- namespace the set names (encns may be nil: the set only). Returns an error reply
-- (DATALOSS) or nil. O(1).
local function check_gen(gb, encns)
  if not encns then
    if redis.call('EXISTS', gb .. ':ns') == 0 then return dataloss('namespace set ' .. gb .. ':ns') end
    return nil
  end
  local idx = gb .. ':n:' .. encns .. ':idx'
  if redis.call('EXISTS', gb .. ':ns', idx) == 2 then return nil end -- the usual case, one call
  if redis.call('EXISTS', gb .. ':ns') == 0 then return dataloss('namespace set ' .. gb .. ':ns') end
  if redis.call('SISMEMBER', gb .. ':ns', encns) == 1 then return dataloss('namespace index ' .. idx) end
  return nil
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
-- Gives a sorted set Redis's skiplist encoding. A listpack inserts by a linear scan, about 450 instructions
-- per member up to its 128th, so an index that grows by one ID at each Put would pay that on every Put; a
-- skiplist costs about 830 bytes more for the set and about 90 more per member. A member too long for a
-- listpack, added and removed at once, converts the set, and Redis 7 does not convert a sorted set back when
-- members go (a restart that loads it does): 65 NUL bytes, longer than zset-max-listpack-value (64 by
-- default) and unlike any member of an index or registry (no checkpoint ID or encoded thread holds a NUL
-- byte). Nothing else changes: the member is gone before anyone reads. O(log n) for a skiplist; converting
-- a listpack is O(its members), at most zset-max-listpack-entries.
local function skiplist(key)
  local long = string.rep('\0', 65)
  redis.call('ZADD', key, '0', long)
  redis.call('ZREM', key, long)
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
-- The key of the pending writes a PutWrites stored before their checkpoint exists (put_writes.lua), and
-- the member of the shard's registry of such keys (sb .. 'early', score: the time from which they may be
-- reclaimed). O(1).
local function early_key(sb, enct, encns, id)
  return sb .. 't:' .. enct .. ':early:' .. encns .. ':' .. id
end
local function early_member(enct, encns, id)
  return enct .. '\0' .. encns .. '\0' .. id
end
-- Reclaims up to n early writes whose checkpoint never came and whose time (ms, a number or its decimal
-- string) has come, and returns how many. O(n log n).
local function reclaim_early(sb, n, now)
  local due = redis.call('ZRANGEBYSCORE', sb .. 'early', '-inf', now, 'LIMIT', '0', n)
  for _, m in ipairs(due) do
    local p = split0(m)
    redis.call('UNLINK', early_key(sb, p[1], p[2], p[3]))
    redis.call('ZREM', sb .. 'early', m)
  end
  return #due
end
-- Reclaims up to budget units from the generations of the shard's queue that are due
-- by now (ms: a number, or its decimal string, which spares Redis a conversion). Returns the units used and
-- whether due work remains. O(budget log n).
local function reclaim_due(sb, budget, now)
  local used = 0
  while used < budget do
    local due = redis.call('ZRANGEBYSCORE', sb .. 'gc', '-inf', now, 'LIMIT', '0', '1')
    if #due == 0 then return used, false end
    local u = reclaim_gen(sb, due[1], budget - used)
    used = used + u
  end
  return used, #redis.call('ZRANGEBYSCORE', sb .. 'gc', '-inf', now, 'LIMIT', '0', '1') > 0
end
-- Retires up to n threads of the shard whose lease ran out by now, and returns how many it retired. n and
-- now (ms) go to Redis as given: numbers, or decimal strings, which spare it a conversion.
-- O(n log threads).
local function retire_expired(sb, n, now)
  local expired = redis.call('ZRANGEBYSCORE', sb .. 'threads', '1', now, 'LIMIT', '0', n)
  for _, enct in ipairs(expired) do
    retire(sb, enct, redis.call('HGET', sb .. 't:' .. enct, 'g'), now)
  end
  return #expired
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
-- Reads an event spec from ARGV at position i (maxlen, feed maxlen, n, then n
-- field/value pairs) without copying it: returns maxlen and feedmaxlen
-- (event_bounds), for publish, the positions of the first and last item of
-- the pairs, and the position after the spec. O(1).
local function event_span(i)
  local maxlen, feedmaxlen = event_bounds(i)
  local n = tonumber(ARGV[i + 2])
  return maxlen, feedmaxlen, i + 3, i + 2 + 2 * n, i + 3 + 2 * n
end
-- put.lua: stores one checkpoint, its new channel values and its index entries, renews the thread's lease,
-- and announces it, atomically; then reclaims a little due garbage of the shard.
-- Channel values are stored in the namespace's values hash under their (channel, version) blob field, and a
-- checkpoint's "c:" fields name versions: a read resolves each version to what is stored under it then, so
-- the order in which checkpoints are written never changes what a read answers (docs/storage-format.md,
-- "Writing a checkpoint").
-- KEYS[1] thread head hash (P:{N}:t:T)
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] index zset of every checkpoint of the shard
-- KEYS[4] reclaim queue zset of the shard
-- KEYS[5] event stream of the thread
-- KEYS[6] event feed of the shard
-- KEYS[7] (optional) run index set of the checkpoint's run
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id
-- ARGV[5] parent id, "" for a root checkpoint; the checkpoint's own id to replace it in place (a re-put
--         that keeps its stored parent, as LangGraph's runtime does when it puts a loaded checkpoint again)
-- ARGV[6] generation to start when the thread has none (a fresh token)
-- ARGV[7] call token: a re-sent call (same token) finds its checkpoint stored and changes nothing
-- ARGV[8] TTL in milliseconds, 0 to keep forever
-- ARGV[9] n, the number of checkpoint hash field/value pairs
-- ARGV[10] m, the number of blob field/value pairs (the channels with new versions)
-- ARGV[11 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- then n checkpoint hash field/value pairs, then the m blob field/value pairs
-- Returns: {status, generation}: status 1 when the checkpoint is new (taking the pending writes a PutWrites
--          stored before it, under its early key), 0 when it replaced one with the same id (whose pending
--          writes and parent are kept), 2 for a re-sent call; the generation is the thread's
--          after the call.
--          Errors, raised before the first write: "DATALOSS ..." when the thread's head is missing while its
--          registry entry exists, or a live generation lacks a set or index, or the shard's index of every
--          checkpoint is gone while the shard has threads, or the namespace's values hash is gone while it has
--          checkpoints, or the checkpoint's or its parent's hash is gone while the index names it; "REPARENT ..." when the id
--          exists with another parent; "NOCHECKPOINT ..." for an in-place re-put of a checkpoint not stored.
-- Work bound: O(n + m + e) for the write, plus at most 16 units of reclaim, one expired thread retired and
--          one early write whose checkpoint never came reclaimed,
--          and the conversion of up to four sorted sets to skiplists (lib.lua's skiplist: O(members) of a
--          listpack, at most zset-max-listpack-entries, 128 by default).
local sb, enct, encns, id, parent, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[7]
local ttl = tonumber(ARGV[8])
local n, m = tonumber(ARGV[9]), tonumber(ARGV[10])
local maxlen, feedmaxlen, evfrom, evto, at = event_span(11)
local runkey = KEYS[7]
local inplace = parent == id
local now = now_ms()
-- Formatted once for the reclaim's calls: a Lua number passed to redis.call is formatted by Redis with
-- "%.17g", which costs more than the calls themselves.
local nowstr = string.format('%d', now)
local bat = at + 2 * n

-- The blob fields this call writes, and the blob fields of the versions the checkpoint names without
-- writing them (resolved below).
local writing = {}
for i = bat, bat + 2 * m - 1, 2 do writing[ARGV[i]] = true end
local byte = string.byte
local named = {}
for i = at, at + 2 * n - 1, 2 do
  local f = ARGV[i]
  local b1, b2 = byte(f, 1, 2)
  if b1 == 99 and b2 == 58 then
    local bf = blob_field(string.sub(f, 3), ARGV[i + 1])
    if not writing[bf] then named[#named + 1] = {f, ARGV[i + 1], bf} end
  end
end

-- A write judges the thread from its head, as reads do: the registry entry is an index that the check
-- reports, and that every Put with a TTL rewrites.
local gen, state, detail = thread_state(sb, enct, now, true, KEYS[1])
if state == 'lost' then return dataloss(detail) end
local newgen = state ~= 'live'
local oldgen = gen
if newgen then gen = ARGV[6] end

local gb = sb .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns
local cp = nb .. ':cp:' .. id
local blobs = nb .. ':blobs'
local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen

-- Checks, before the first write. A live generation missing an index or its namespace set, or a shard
-- index of every checkpoint gone while the shard has threads, would be rebuilt short by this write and then
-- read as complete: it is lost data instead. One EXISTS counts the shard index four times, the keep set of
-- a running reclaim of values eight times and the values hash sixteen times: values hash = count // 16,
-- keep set = count % 16 // 8, shard index = count % 8 // 4.
local old, keeping, listed, newall, hasblobs = {false, false, false, false}, false, false, false, false
if newgen then
  local lost, exists = check_shard_index(sb, enct)
  if lost then return lost end
  newall = not exists
else
  local keep, all = nb .. ':keep', KEYS[3]
  local count = redis.call('EXISTS', gb .. ':ns', nb .. ':idx', gb .. ':idx', all, all, all, all,
    keep, keep, keep, keep, keep, keep, keep, keep, blobs, blobs, blobs, blobs, blobs, blobs, blobs, blobs,
    blobs, blobs, blobs, blobs, blobs, blobs, blobs, blobs)
  hasblobs = count >= 16
  count = count % 16
  keeping = count >= 8
  count = count % 8
  if count < 4 then return dataloss('shard index ' .. KEYS[3]) end -- a live thread has entries there
  count = count % 4
  listed = count == 3 -- the namespace has an index, so the set names it
  if count < 3 then
    local lost = check_gen(gb, encns)
    if lost then return lost end
    if redis.call('EXISTS', gb .. ':idx') == 0 then return dataloss('thread index ' .. gb .. ':idx') end
  end
  old = redis.call('HMGET', cp, 'v', 'p', 'o', 'r')
  if old[1] then
    if old[3] == token then return {2, gen} end -- a re-sent call: the checkpoint is stored
    if inplace then parent = old[2] or '' end
    if (old[2] or '') ~= parent then
      return redis.error_reply('REPARENT checkpoint ' .. id .. ' exists with parent "' .. (old[2] or '') ..
        '", not "' .. parent .. '"')
    end
  elseif redis.call('ZSCORE', nb .. ':idx', id) then
    -- Indexed and gone: lost with its pending writes, which a new hash would hide.
    return dataloss('checkpoint hash ' .. cp)
  end
end
if inplace and not old[1] then
  return redis.error_reply('NOCHECKPOINT checkpoint ' .. id .. ' is not stored: it cannot be replaced in place')
end
-- Pending writes a PutWrites stored before this checkpoint (put_writes.lua): the new checkpoint takes them.
local early = nil
if not old[1] then
  early = early_key(sb, enct, encns, id)
  if redis.call('EXISTS', early) == 0 then early = nil end
end

-- The versions the checkpoint names without writing them: a version whose value is stored reads it; one
-- never stored gets the empty marker (the channel reads back absent, as LangGraph's savers answer), which
-- the Put that writes the version replaces. A parent its index names whose hash is gone, or a values hash
-- gone while the namespace has checkpoints, was lost: a marker would hide the loss.
local unstored = {}
if #named > 0 and (newgen or not listed) then
  -- A namespace this Put starts has no values yet: a version it names is stored by no Put so far.
  for j, c in ipairs(named) do unstored[j] = c[3] end
elseif #named > 0 then
  -- A version the parent names too was resolved by the parent's Put (a value or the marker; one missing
  -- since was lost, and a read reports it): one HMGET of the parent's "c:" fields spares their checks.
  local rest = named
  if parent ~= '' then
    local list = {}
    for j, c in ipairs(named) do list[j] = c[1] end
    local pv = chunked('HMGET', nb .. ':cp:' .. parent, list, 1000)
    rest = {}
    for j, c in ipairs(named) do
      if pv[j] ~= c[2] then rest[#rest + 1] = c end
    end
  end
  for _, c in ipairs(rest) do
    if redis.call('HEXISTS', blobs, c[3]) == 0 then unstored[#unstored + 1] = c[3] end
  end
  if #unstored > 0 and parent ~= '' and redis.call('EXISTS', nb .. ':cp:' .. parent) == 0 and
      redis.call('ZSCORE', nb .. ':idx', parent) then
    return dataloss('checkpoint hash ' .. nb .. ':cp:' .. parent .. ' (the parent)')
  end
end
-- A namespace's values hash exists from the namespace's first Put on (its field "#"): a namespace with
-- checkpoints and no values hash lost it. Writing into it would make it anew and hide the loss (a later
-- Put would give a lost version the empty marker).
if listed and not hasblobs then return dataloss('values hash ' .. blobs) end

-- Writes.
if state == 'expired' then retire(sb, enct, oldgen, now) end
local fresh = 1
if old[1] then
  fresh = 0
  if old[4] and old[4] ~= runkey then redis.call('SREM', old[4], member) end
  local stale = {}
  for _, f in ipairs(redis.call('HKEYS', cp)) do
    if string.sub(f, 1, 2) ~= 'w:' then stale[#stale + 1] = f end
  end
  if #stale > 0 then chunked('HDEL', cp, stale, 1000) end
end
if early then
  -- The early writes' hash becomes the checkpoint's (O(1): no write enters Lua), then gets its fields.
  redis.call('RENAME', early, cp)
  redis.call('ZREM', sb .. 'early', early_member(enct, encns, id))
end
local fields = {'o', token}
if parent ~= '' then fields[3], fields[4] = 'p', parent end
for i = at, at + 2 * n - 1 do fields[#fields + 1] = ARGV[i] end
chunked('HSET', cp, fields, 1000)
if newgen or not listed then redis.call('HSETNX', blobs, '#', '') end -- the namespace's values hash
for _, f in ipairs(unstored) do redis.call('HSETNX', blobs, f, '') end
if m > 0 then
  local values = {}
  for i = bat, bat + 2 * m - 1 do values[#values + 1] = ARGV[i] end
  chunked('HSET', blobs, values, 1000)
end
-- A reclaim of unreferenced values (blob_gc.lua) running on this namespace must keep every value this
-- checkpoint names.
if keeping then
  local referenced = {}
  for f in pairs(writing) do referenced[#referenced + 1] = f end
  for _, c in ipairs(named) do referenced[#referenced + 1] = c[3] end
  if #referenced > 0 then chunked('SADD', nb .. ':keep', referenced, 1000) end
end

redis.call('ZADD', nb .. ':idx', '0', id)
redis.call('ZADD', gb .. ':idx', '0', id .. '\0' .. encns)
redis.call('ZADD', KEYS[3], '0', member)
-- Indexes that grow by a member at each Put become skiplists (lib.lua's skiplist): the shard's when this
-- call creates it, the namespace's and the thread's each time the namespace's reaches a multiple of 16
-- checkpoints (a thread that stays smaller keeps the listpacks' smaller memory; one copied, or loaded by a
-- restart, converts at the next multiple; once skiplists, 4 calls more every 16 Puts).
if newall then skiplist(KEYS[3]) end
if redis.call('ZCARD', nb .. ':idx') % 16 == 0 then
  skiplist(nb .. ':idx')
  skiplist(gb .. ':idx')
end
if not listed then redis.call('SADD', gb .. ':ns', encns) end
if runkey then redis.call('SADD', runkey, member) end
if newgen then redis.call('HSET', KEYS[1], 'g', gen) end
if newgen or ttl > 0 then touch(sb, enct, ttl, now) end
-- The shard's registry too, which every Put scans for expired threads (and a Put with a TTL rewrites an
-- entry of): each time a new thread brings it to a multiple of 16 members.
if newgen and redis.call('ZCARD', KEYS[2]) % 16 == 0 then skiplist(KEYS[2]) end
if maxlen ~= '0' then
  if fresh == 0 then
    -- A re-put: the event says the stored checkpoint was replaced (field "re").
    local ev = {unpack(ARGV, evfrom, evto)}
    ev[#ev + 1], ev[#ev + 2] = 're', '1'
    publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, unpack(ev))
  else
    publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, unpack(ARGV, evfrom, evto))
  end
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[5], ARGV[8])
  elseif newgen then
    redis.call('PERSIST', KEYS[5]) -- a thread deleted and written again: its stream stays
  end
end

-- A little of the shard's due garbage, so expired and deleted threads are reclaimed as writes go on.
retire_expired(sb, '1', nowstr)
reclaim_due(sb, 16, nowstr)
reclaim_early(sb, 1, nowstr)
return {fresh, gen}
