-- put.lua: stores one checkpoint, its new channel values and its index entries, renews the thread's lease,
-- and announces it, atomically; then reclaims a little due garbage of the shard.
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
-- ARGV[5] parent id, or "" for a root checkpoint
-- ARGV[6] generation to start when the thread has none (a fresh token)
-- ARGV[7] call token: a re-sent call (same token) finds its checkpoint stored and changes nothing
-- ARGV[8] TTL in milliseconds, 0 to keep forever
-- ARGV[9] n, the number of checkpoint hash field/value pairs
-- ARGV[10] m, the number of blob field/value pairs (only the channels with new versions)
-- ARGV[11 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- then n checkpoint hash field/value pairs, then m blob field/value pairs
-- Returns: 1 when the checkpoint is new, 0 when it replaced one with the same id (whose pending writes are
--          kept), 2 for a re-sent call. Errors, raised before anything is written: "DATALOSS ..." when the
--          thread's head or registry entry is missing, or the namespace's values hash while it has
--          checkpoints; "REPARENT ..." when the id exists with another parent.
-- Work bound: O(n + m + e) for the write, plus at most 16 units of reclaim and one expired thread retired.
local sb, enct, encns, id, parent = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local ttl = tonumber(ARGV[8])
local n, m = tonumber(ARGV[9]), tonumber(ARGV[10])
local maxlen, feedmaxlen, event, at = event_spec(11)
local now = now_ms()

local gen, state, detail = thread_state(sb, enct, now)
if state == 'lost' then return dataloss(detail) end
local newgen = state ~= 'live'
local oldgen = gen
if newgen then gen = ARGV[6] end

local gb = sb .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns
local cp = nb .. ':cp:' .. id
local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen

-- Checks, before the first write. A live generation missing an index or its namespace set would be
-- rebuilt short by this write and then read as complete: it is lost data instead.
local old = {false, false, false, false}
if not newgen and redis.call('EXISTS', gb .. ':ns', nb .. ':idx', gb .. ':idx') < 3 then
  local lost = check_gen(gb, encns)
  if lost then return lost end
  if redis.call('EXISTS', gb .. ':idx') == 0 then return dataloss('thread index ' .. gb .. ':idx') end
end
if not newgen then
  old = redis.call('HMGET', cp, 'v', 'p', 'o', 'r')
  if old[1] then
    if old[3] == ARGV[7] then return 2 end
    if (old[2] or '') ~= parent then
      return redis.error_reply('REPARENT checkpoint ' .. id .. ' exists with parent "' .. (old[2] or '') ..
        '", not "' .. parent .. '"')
    end
  end
end
-- A channel version the checkpoint names and does not write reads from the value stored for it; one
-- never stored gets the empty marker below (the channel reads back absent, as LangGraph's contract says).
-- A values hash gone whole while the namespace has checkpoints was lost instead.
local writing, referenced, unchanged, unstored = {}, {}, {}, {}
for i = at + 2 * n, at + 2 * n + 2 * m - 1, 2 do writing[ARGV[i]] = true end
for i = at, at + 2 * n - 1, 2 do
  if string.sub(ARGV[i], 1, 2) == 'c:' then
    local f = blob_field(string.sub(ARGV[i], 3), ARGV[i + 1])
    referenced[#referenced + 1] = f
    if not writing[f] then unchanged[#unchanged + 1] = f end
  end
end
if #unchanged > 0 then
  local have = {}
  if not newgen then have = chunked('HMGET', nb .. ':blobs', unchanged, 1000) end
  for i = 1, #unchanged do
    if not have[i] then unstored[#unstored + 1] = unchanged[i] end
  end
  if #unstored > 0 and not newgen and redis.call('EXISTS', nb .. ':blobs') == 0 and
      redis.call('EXISTS', nb .. ':idx') == 1 then
    return dataloss('values hash ' .. nb .. ':blobs')
  end
end

-- Writes.
if state == 'expired' then retire(sb, enct, oldgen, now) end
local fresh = 1
if old[1] then
  fresh = 0
  if old[4] and old[4] ~= KEYS[7] then redis.call('SREM', old[4], member) end
  local stale = {}
  for _, f in ipairs(redis.call('HKEYS', cp)) do
    if string.sub(f, 1, 2) ~= 'w:' then stale[#stale + 1] = f end
  end
  if #stale > 0 then chunked('HDEL', cp, stale, 1000) end
end

local fields = {'o', ARGV[7]}
for i = at, at + 2 * n - 1 do fields[#fields + 1] = ARGV[i] end
chunked('HSET', cp, fields, 1000)

for _, f in ipairs(unstored) do redis.call('HSETNX', nb .. ':blobs', f, '') end
if m > 0 then
  local blobs = {}
  for i = at + 2 * n, at + 2 * n + 2 * m - 1 do blobs[#blobs + 1] = ARGV[i] end
  chunked('HSET', nb .. ':blobs', blobs, 1000)
end
-- A reclaim of unreferenced values (blob_gc.lua) running on this namespace must keep every value this
-- checkpoint points to.
if #referenced > 0 and redis.call('EXISTS', nb .. ':keep') == 1 then
  chunked('SADD', nb .. ':keep', referenced, 1000)
end

redis.call('ZADD', nb .. ':idx', 0, id)
redis.call('ZADD', gb .. ':idx', 0, id .. '\0' .. encns)
redis.call('ZADD', KEYS[3], 0, member)
redis.call('SADD', gb .. ':ns', encns)
if KEYS[7] then redis.call('SADD', KEYS[7], member) end
if newgen then redis.call('HSET', KEYS[1], 'g', gen) end
if newgen or ttl > 0 then touch(sb, enct, ttl, now) end
if maxlen > 0 then
  publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, event)
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[5], ttl)
  elseif newgen then
    redis.call('PERSIST', KEYS[5]) -- a thread deleted and written again: its stream stays
  end
end

-- A little of the shard's due garbage, so expired and deleted threads are reclaimed as writes go on.
retire_expired(sb, 1, now)
reclaim_due(sb, 16, now)
return fresh
