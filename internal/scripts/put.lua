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
