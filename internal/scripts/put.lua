-- put.lua: stores one checkpoint, its new channel values and its index entries, renews the thread's lease,
-- and announces it, atomically; then reclaims a little due garbage of the shard.
-- Two ways to pass the values (docs/storage-format.md, "Writing a checkpoint"):
--   in ARGV (m >= 0): the script stores them;
--   staged (m < 0): the client wrote them with HSET to the values hash of the generation it knows, in the
--     same MULTI/EXEC just before this script, under fields whose version carries the call token
--     (version \0 token), so that the script can take them back exactly. When that generation is not the
--     thread's live one, or a check fails, the script deletes the staged fields: nothing stays written.
--     A client that knows no generation (a new thread) stages them the same way to the stage key
--     P:{N}:stage:token (with a TTL), for the generation ARGV[6] it proposes: when the thread has no live
--     generation, the script renames that key to the new generation's values hash (and persists it);
--     else it moves the values into the live generation's values hash (through Lua, as values in ARGV
--     would go) and deletes the key.
-- KEYS[1] thread head hash (P:{N}:t:T)
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] index zset of every checkpoint of the shard
-- KEYS[4] reclaim queue zset of the shard
-- KEYS[5] event stream of the thread
-- KEYS[6] event feed of the shard
-- KEYS[7] (optional) run index set of the checkpoint's run
-- KEYS[#KEYS] staged values only (m < 0): the values hash the client wrote, or its stage key (the last key)
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id
-- ARGV[5] parent id, or "" for a root checkpoint
-- ARGV[6] generation to start when the thread has none (a fresh token)
-- ARGV[7] call token: a re-sent call (same token) finds its checkpoint stored and changes nothing
-- ARGV[8] TTL in milliseconds, 0 to keep forever
-- ARGV[9] n, the number of checkpoint hash field/value pairs
-- ARGV[10] m: m >= 0, the number of blob field/value pairs in ARGV (only the channels with new versions);
--          m < 0, the number (-m) of blob fields staged in KEYS[#KEYS]
-- ARGV[11 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- then n checkpoint hash field/value pairs, then the m blob field/value pairs (or the -m staged fields)
--   Staged only: the hash pairs come in this order: first the "c:" pairs of the -m staged fields, in their
--   order (field j's "c:" value is its version \0 token); then k "c:" pairs the call does not write, each
--   valued with what the client expects the parent's "c:" field of that channel to hold when the parent
--   names the same version (else the plain version); then the other fields. k follows the staged fields.
-- Returns: {status, generation[, exact]}: status 1 when the checkpoint is new, 0 when it replaced one with
--          the same id (whose pending writes are kept), 2 for a re-sent call, 3 when staged values were written
--          to a generation that is not the thread's live one (nothing is written; the generation returned is
--          the live one, "" for none); the generation is the thread's after the call; exact (statuses 0 and 1) is 1 when the checkpoint's "c:" fields are
--          exactly as sent (a staged Put), else 0.
--          Errors, raised when nothing is written (staged fields deleted): "DATALOSS ..." when the thread's
--          head is missing while its registry entry exists, or a live generation lacks a set or index, or
--          the shard's index of every checkpoint is gone while the shard has threads, or the namespace's
--          values hash is gone while it has checkpoints, or an alias names a staged value that is gone
--          while no reclaim of values runs (docs/storage-format.md, "Aliases"); "REPARENT ..." when the id
--          exists with another parent; "BADARGS ..." when staged arguments break the order above, or a
--          stage key holds nothing (client bugs).
-- Work bound: O(n + |m| + e) for the write, plus at most 16 units of reclaim and one expired thread retired,
--          and the conversion of up to four sorted sets to skiplists (lib.lua's skiplist: O(members) of a
--          listpack, at most zset-max-listpack-entries, 128 by default).
local sb, enct, encns, id, parent, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[7]
local ttl = tonumber(ARGV[8])
local n, m = tonumber(ARGV[9]), tonumber(ARGV[10])
local staged = m < 0
if staged then m = -m end
local maxlen, feedmaxlen, evfrom, evto, at = event_span(11)
local runkey = KEYS[7]
if staged and #KEYS < 8 then runkey = nil end
local now = now_ms()
-- Formatted once for the reclaim's calls: a Lua number passed to redis.call is formatted by Redis with
-- "%.17g", which costs more than the calls themselves.
local nowstr = string.format('%d', now)

-- Blob fields written by this call: those staged (taken back on any refusal), or the pairs in ARGV.
local writing, stagedfields = {}, {}
local bat = at + 2 * n
local k = 0
if staged then
  for i = bat, bat + m - 1 do stagedfields[#stagedfields + 1] = ARGV[i] end
  k = tonumber(ARGV[bat + m]) or -1
else
  for i = bat, bat + 2 * m - 1, 2 do writing[ARGV[i]] = true end
end
-- A stage key (a new thread's values, staged for the generation ARGV[6]) holds nothing else.
local stagekey = staged and KEYS[#KEYS] == sb .. 'stage:' .. token
local function unstage()
  if stagekey then
    redis.call('DEL', KEYS[#KEYS])
  elseif #stagedfields > 0 then
    chunked('HDEL', KEYS[#KEYS], stagedfields, 1000)
  end
end
local function refuse(reply)
  unstage()
  return reply
end
-- Whether a "c:" field's stored value names version ver: ver itself, or ver \0 token.
local function names_version(stored, ver)
  return stored == ver or string.sub(stored, 1, #ver + 1) == ver .. '\0'
end
-- Whether a hash field is a "c:" field. The loops over every pair test its bytes in place: a Lua function
-- call costs about as much as the test.
local byte = string.byte
local function is_c(f)
  local b1, b2 = byte(f, 1, 2)
  return b1 == 99 and b2 == 58
end

-- The checkpoint hash's fields are {'o', token, then the n pairs of ARGV}; a field's index p in that list is
-- its ARGV position - at + 3. over holds the values this call changes (p -> value); fv(p) reads one.
local over = {}
local function fv(p)
  local o = over[p]
  if o ~= nil then return o end
  if p == 2 then return token end
  return ARGV[at + p - 3]
end
local function hash_fields()
  local out = {'o', token}
  for i = at, at + 2 * n - 1 do out[#out + 1] = ARGV[i] end
  for p, v in pairs(over) do out[p] = v end
  return out
end

-- The "c:" fields of the versions this call writes (staged only): {index of the field, the field, its blob
-- field}; and the indexes of the values of the "c:" fields it does not write (their versions to resolve).
local ownc, inherit = {}, {}
if staged then
  if k < 0 or m + k > n then return refuse(redis.error_reply('BADARGS staged Put without a valid count of inherited versions')) end
  for j = 1, m do
    local i = at + 2 * (j - 1)
    if not is_c(ARGV[i]) or blob_field(string.sub(ARGV[i], 3), ARGV[i + 1]) ~= stagedfields[j] then
      return refuse(redis.error_reply('BADARGS staged field ' .. j .. ' is not the value of hash pair ' .. j))
    end
    ownc[j] = {i - at + 3, ARGV[i], stagedfields[j]}
  end
  local last = at + 2 * (m + k)
  for i = at + 2 * m, at + 2 * n - 1, 2 do
    local b1, b2 = byte(ARGV[i], 1, 2)
    if (b1 == 99 and b2 == 58) ~= (i < last) then
      return refuse(redis.error_reply('BADARGS staged Put hash pairs out of order'))
    end
  end
  for j = 1, k do inherit[j] = 2 * m + 2 * j + 2 end
else
  for i = at, at + 2 * n - 1, 2 do
    local f = ARGV[i]
    local b1, b2 = byte(f, 1, 2)
    if b1 == 99 and b2 == 58 and not writing[blob_field(string.sub(f, 3), ARGV[i + 1])] then
      inherit[#inherit + 1] = i - at + 4
    end
  end
end

-- A write judges the thread from its head, as reads do: the registry entry is an index that the check
-- reports, and that every Put with a TTL rewrites.
local gen, state, detail = thread_state(sb, enct, now, true, KEYS[1])
if state == 'lost' then return refuse(dataloss(detail)) end
local newgen = state ~= 'live'
local oldgen = gen
if newgen then gen = ARGV[6] end

local gb = sb .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns
local cp = nb .. ':cp:' .. id
local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
-- A stage key while the thread has a generation (a root Put into a thread the client did not know, or the
-- call sent again after its proposal became the generation): the checks below as for any staged Put, then
-- its values move into the live values hash.
local adopt = stagekey and not newgen
if staged and not stagekey and (newgen or KEYS[#KEYS] ~= nb .. ':blobs') then
  unstage()
  if newgen then return {3, ''} end
  return {3, gen}
end
if stagekey and redis.call('EXISTS', KEYS[#KEYS]) == 0 then
  return redis.error_reply('BADARGS stage key ' .. KEYS[#KEYS] .. ' holds no staged values')
end

-- Checks, before the first write. A live generation missing an index or its namespace set, or a shard
-- index of every checkpoint gone while the shard has threads, would be rebuilt short by this write and then
-- read as complete: it is lost data instead. One EXISTS counts the shard index four times and the keep set
-- of a running reclaim of values eight times: keep exists = count // 8, the shard index = count % 8 // 4.
local old, keeping, listed, newall = {false, false, false, false}, false, false, false
if newgen then
  local lost, exists = check_shard_index(sb, enct)
  if lost then return refuse(lost) end
  newall = not exists
else
  local keep, all = nb .. ':keep', KEYS[3]
  local count = redis.call('EXISTS', gb .. ':ns', nb .. ':idx', gb .. ':idx', all, all, all, all,
    keep, keep, keep, keep, keep, keep, keep, keep)
  keeping = count >= 8
  count = count % 8
  if count < 4 then return refuse(dataloss('shard index ' .. KEYS[3])) end -- a live thread has entries there
  count = count % 4
  listed = count == 3 -- the namespace has an index, so the set names it
  if count < 3 then
    local lost = check_gen(gb, encns)
    if lost then return refuse(lost) end
    if redis.call('EXISTS', gb .. ':idx') == 0 then return refuse(dataloss('thread index ' .. gb .. ':idx')) end
  end
  old = redis.call('HMGET', cp, 'v', 'p', 'o', 'r')
  if old[1] then
    if old[3] == token then
      -- A re-sent call: the checkpoint is stored. Staged fields it does not point to (a re-put that
      -- pointed to values already stored) go again.
      if stagekey then
        unstage()
      elseif staged and #ownc > 0 then
        local list, drop = {}, {}
        for j, c in ipairs(ownc) do list[j] = c[2] end
        local have = chunked('HMGET', cp, list, 1000)
        for j, c in ipairs(ownc) do
          if blob_field(string.sub(c[2], 3), have[j] or '') ~= c[3] then drop[#drop + 1] = c[3] end
        end
        if #drop > 0 then chunked('HDEL', KEYS[#KEYS], drop, 1000) end
      end
      return {2, gen}
    end
    if (old[2] or '') ~= parent then
      return refuse(redis.error_reply('REPARENT checkpoint ' .. id .. ' exists with parent "' .. (old[2] or '') ..
        '", not "' .. parent .. '"'))
    end
  end
end

-- The checkpoint's fields. A "c:" field's value names the blob field of its value: the version, or
-- version \0 token for a value staged by a Put. A channel version the checkpoint names and does not write
-- points where its parent's does when the parent names the same version; else to the value stored under
-- the plain version, or to the staged value an alias there names; one never stored gets the empty marker
-- (the channel reads back absent, as LangGraph's contract says). A values hash gone whole while the
-- namespace has checkpoints was lost.
-- A re-put writing a version its checkpoint already holds points to the value already stored.
local redirected = {} -- staged fields a re-put dropped: the checkpoint points to values already stored
if old[1] and staged and #ownc > 0 then
  local list, drop = {}, {}
  for j, c in ipairs(ownc) do list[j] = c[2] end
  local had = chunked('HMGET', cp, list, 1000)
  for j, c in ipairs(ownc) do
    local v, h = fv(c[1] + 1), had[j]
    if h and h ~= v and names_version(h, string.match(v, '^([^%z]*)')) then
      drop[#drop + 1] = c[3]
      redirected[c[3]] = true
      over[c[1] + 1] = h
    end
  end
  if #drop > 0 then chunked('HDEL', KEYS[#KEYS], drop, 1000) end
end
-- unstored: plain fields of versions never stored, emptied: those holding an alias whose value went; both
-- get the empty marker (the channel reads back absent).
local unstored, emptied = {}, {}
if #inherit > 0 and newgen then
  for _, i in ipairs(inherit) do unstored[#unstored + 1] = blob_field(string.sub(fv(i - 1), 3), fv(i)) end
elseif #inherit > 0 then
  local rest = inherit
  if parent ~= '' then
    local list, ni = {}, #inherit
    for j = 1, ni do list[j] = fv(inherit[j] - 1) end
    local pv = chunked('HMGET', nb .. ':cp:' .. parent, list, 1000)
    rest = {}
    for j = 1, ni do
      local i = inherit[j]
      local p, v = pv[j], fv(i)
      if p ~= v then
        -- The version: a staged Put's client may have sent the pointer it expected the parent to hold.
        v = string.match(v, '^([^%z]*)')
        if p and names_version(p, v) then
          over[i] = p
        else
          over[i] = v
          rest[#rest + 1] = i
        end
      end
    end
  end
  -- A re-put naming a version its checkpoint already names (and its parent does not) points where the
  -- checkpoint did: a value a Put staged is stored under version \0 token, not under the plain version.
  if old[1] and #rest > 0 then
    local list = {}
    for j, i in ipairs(rest) do list[j] = fv(i - 1) end
    local had = chunked('HMGET', cp, list, 1000)
    local left = {}
    for j, i in ipairs(rest) do
      local v = string.match(fv(i), '^([^%z]*)')
      if had[j] and names_version(had[j], v) then
        over[i] = had[j]
      else
        left[#left + 1] = i
      end
    end
    rest = left
  end
  -- A parent its namespace's index names whose hash is gone was lost: its versions cannot be resolved,
  -- and must not read back absent.
  if #rest > 0 and parent ~= '' and redis.call('EXISTS', nb .. ':cp:' .. parent) == 0 and
      redis.call('ZSCORE', nb .. ':idx', parent) then
    return refuse(dataloss('checkpoint hash ' .. nb .. ':cp:' .. parent .. ' (the parent)'))
  end
  if #rest > 0 then
    local blobs = nb .. ':blobs'
    for _, i in ipairs(rest) do
      local v = string.match(fv(i), '^([^%z]*)')
      local f = blob_field(string.sub(fv(i - 1), 3), v)
      local size = redis.call('HSTRLEN', blobs, f)
      if size == 0 then
        if redis.call('HEXISTS', blobs, f) == 0 then unstored[#unstored + 1] = f end
      elseif size <= 64 then -- maybe an alias (">" token, 14 bytes): read it
        local target = alias_target(f, redis.call('HGET', blobs, f))
        if target and redis.call('HEXISTS', blobs, target) == 1 then
          over[i] = v .. string.sub(target, #f + 1)
        elseif target and keeping then
          -- The value it named went in the reclaim of unreferenced values running on the namespace (which
          -- drops the alias too, once it reaches it): the version has no value left.
          emptied[#emptied + 1] = f
        elseif target then
          -- No reclaim runs: a reclaim drops an alias with its value, so the value was lost.
          return refuse(dataloss('value ' .. f .. ' staged by Put ' .. string.sub(target, #f + 2) .. ' in ' .. blobs ..
            ' (its alias is there)'))
        end
      end
    end
    -- A values hash that holds nothing but what this call staged (the staged HSET made it anew) was lost
    -- whole, as one that does not exist: its versions must not read back absent.
    local here = #stagedfields
    if adopt then here = 0 end
    if #unstored > 0 and redis.call('HLEN', nb .. ':blobs') <= here and redis.call('EXISTS', nb .. ':idx') == 1 then
      return refuse(dataloss('values hash ' .. nb .. ':blobs'))
    end
  end
end

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
if next(over) == nil and n <= 500 then
  redis.call('HSET', cp, 'o', token, unpack(ARGV, at, at + 2 * n - 1))
else
  chunked('HSET', cp, hash_fields(), 1000)
end

if stagekey and newgen then
  -- A new generation has no values hash yet: its staged values become it, with no value entering Lua.
  redis.call('RENAME', KEYS[#KEYS], nb .. ':blobs')
  redis.call('PERSIST', nb .. ':blobs')
elseif adopt then
  -- The live generation has one: the staged values go into it through Lua (O(|m|)), as values in ARGV do.
  local moved = redis.call('HGETALL', KEYS[#KEYS]) -- empty when a re-put pointed every value to one stored
  if #moved > 0 then chunked('HSET', nb .. ':blobs', moved, 1000) end
  redis.call('DEL', KEYS[#KEYS])
end
for _, f in ipairs(unstored) do redis.call('HSETNX', nb .. ':blobs', f, '') end
for _, f in ipairs(emptied) do redis.call('HSET', nb .. ':blobs', f, '') end
-- Each value this call staged gets an alias under its plain field, unless that field holds a value (or the
-- empty marker) already: a checkpoint naming the version without its parent naming it (LangGraph's fork
-- puts a copy of a checkpoint beside it) then finds the value (docs/storage-format.md, "Aliases").
local alias = '>' .. token
for _, f in ipairs(stagedfields) do
  if not redirected[f] then redis.call('HSETNX', nb .. ':blobs', string.sub(f, 1, #f - #token - 1), alias) end
end
if m > 0 and not staged then
  local blobs = {}
  for i = bat, bat + 2 * m - 1 do blobs[#blobs + 1] = ARGV[i] end
  chunked('HSET', nb .. ':blobs', blobs, 1000)
end
-- A reclaim of unreferenced values (blob_gc.lua) running on this namespace must keep every value this
-- checkpoint points to.
if keeping then
  local fields = hash_fields()
  local referenced = {}
  for i = 3, #fields, 2 do
    if is_c(fields[i]) then referenced[#referenced + 1] = blob_field(string.sub(fields[i], 3), fields[i + 1]) end
  end
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
  publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, unpack(ARGV, evfrom, evto))
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[5], ARGV[8])
  elseif newgen then
    redis.call('PERSIST', KEYS[5]) -- a thread deleted and written again: its stream stays
  end
end

-- A little of the shard's due garbage, so expired and deleted threads are reclaimed as writes go on.
retire_expired(sb, '1', nowstr)
reclaim_due(sb, 16, nowstr)
-- Whether the hash's "c:" fields are exactly as sent (a staged Put whose expected pointers held): the
-- client then knows them, and predicts its next read of this checkpoint from them.
local exact = 0
if staged and next(over) == nil then exact = 1 end
return {fresh, gen, exact}
