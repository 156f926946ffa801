-- put.lua: stores one checkpoint, its new channel values and its index entries, and announces it, atomically.
-- KEYS[1] checkpoint hash
-- KEYS[2] index zset of the (thread, namespace): checkpoint ids
-- KEYS[3] blobs hash of the (thread, namespace)
-- KEYS[4] namespaces set of the thread
-- KEYS[5] index zset of the thread: id \0 namespace
-- KEYS[6] thread registry zset of the shard
-- KEYS[7] index zset of every checkpoint of the shard: id \0 thread \0 namespace
-- KEYS[8] event stream of the thread
-- KEYS[9] event feed of the shard
-- KEYS[10] (optional) run index set of the checkpoint's run
-- ARGV[1] TTL in milliseconds, 0 to keep forever
-- ARGV[2] checkpoint id
-- ARGV[3] encoded namespace
-- ARGV[4] encoded thread
-- ARGV[5] n, the number of checkpoint hash field/value pairs
-- ARGV[6] m, the number of blob field/value pairs (only the channels with new versions)
-- ARGV[7 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- then n checkpoint hash field/value pairs, then m blob field/value pairs
-- Returns: 1 when the checkpoint is new, 0 when it replaced one with the same id
--          (the replaced one's pending writes are kept).
local ttl = tonumber(ARGV[1])
local id, encns, enct = ARGV[2], ARGV[3], ARGV[4]
local n, m = tonumber(ARGV[5]), tonumber(ARGV[6])
local maxlen, feedmaxlen, event, at = event_spec(7)
local cp = KEYS[1]
local member = id .. '\0' .. enct .. '\0' .. encns

local fresh = 1
if redis.call('EXISTS', cp) == 1 then
  fresh = 0
  local old = redis.call('HGET', cp, 'r')
  if old and old ~= KEYS[10] then
    redis.call('SREM', old, member)
  end
  local stale = {}
  for _, f in ipairs(redis.call('HKEYS', cp)) do
    if string.sub(f, 1, 2) ~= 'w:' then stale[#stale + 1] = f end
  end
  if #stale > 0 then chunked('HDEL', cp, stale, 1000) end
end

local fields = {}
for i = at, at + 2 * n - 1 do fields[#fields + 1] = ARGV[i] end
chunked('HSET', cp, fields, 1000)

local blobs = {}
for i = at + 2 * n, at + 2 * n + 2 * m - 1 do blobs[#blobs + 1] = ARGV[i] end
if #blobs > 0 then chunked('HSET', KEYS[3], blobs, 1000) end

redis.call('ZADD', KEYS[2], 0, id)
redis.call('ZADD', KEYS[5], 0, id .. '\0' .. encns)
redis.call('ZADD', KEYS[7], 0, member)
-- The registry changes only with a thread's first namespace.
local newns = redis.call('SADD', KEYS[4], encns)
if newns == 1 then redis.call('ZADD', KEYS[6], 0, enct) end
local touched = {KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]}
if KEYS[10] then
  redis.call('SADD', KEYS[10], member)
  touched[#touched + 1] = KEYS[10]
end
if maxlen > 0 then
  publish(KEYS[8], KEYS[9], maxlen, feedmaxlen, event)
  touched[#touched + 1] = KEYS[8]
  -- A thread deleted and written again: its stream no longer expires.
  if newns == 1 and ttl == 0 then redis.call('PERSIST', KEYS[8]) end
end
expire_all(ttl, touched)
return fresh
