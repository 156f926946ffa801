-- restore_thread.lua: writes a dumped thread into an empty thread, atomically.
-- KEYS[1] namespaces set of the target thread
-- KEYS[2] index zset of the target thread
-- KEYS[3] thread registry zset of the target's shard
-- KEYS[4] index zset of every checkpoint of the target's shard
-- ARGV[1] shard base of the target: thread bases are base .. "t:" .. thread
-- ARGV[2] encoded target thread
-- KEYS[5] event stream of the target thread
-- KEYS[6] event feed of the target's shard
-- ARGV[3] TTL in milliseconds, 0 to keep forever
-- ARGV[4 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs;
--            the event, sent when a checkpoint was written, gets the field "n", the number written
-- then records: "ns", encoded namespace, n, then n blob field/value pairs;
--            "cp", id, n, then n checkpoint field/value pairs (of the namespace last named).
--            A checkpoint's "r" field names its run index in the target's shard.
-- Returns: the number of checkpoints written, or the error "EXISTS" when the target has checkpoints.
local base, enct, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local maxlen, feedmaxlen, event, at = event_spec(4)
if redis.call('EXISTS', KEYS[2]) == 1 then
  return redis.error_reply('EXISTS target thread already has checkpoints')
end
local tbase = base .. 't:' .. enct
local touched = {KEYS[1], KEYS[2]}
local written, i = 0, at
local encns, nsbase = nil, nil
while i <= #ARGV do
  local kind, name, n = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local fv = {}
  for j = i + 3, i + 2 + 2 * n do fv[#fv + 1] = ARGV[j] end
  i = i + 3 + 2 * n
  if kind == 'ns' then
    encns = name
    nsbase = tbase .. ':n:' .. encns
    redis.call('SADD', KEYS[1], encns)
    if #fv > 0 then chunked('HSET', nsbase .. ':blobs', fv, 1000) end
    touched[#touched + 1] = nsbase .. ':blobs'
    touched[#touched + 1] = nsbase .. ':idx'
  else
    local cp = nsbase .. ':cp:' .. name
    local member = name .. '\0' .. enct .. '\0' .. encns
    chunked('HSET', cp, fv, 1000)
    redis.call('ZADD', nsbase .. ':idx', 0, name)
    redis.call('ZADD', KEYS[2], 0, name .. '\0' .. encns)
    redis.call('ZADD', KEYS[4], 0, member)
    local run = redis.call('HGET', cp, 'r')
    if run then
      redis.call('SADD', run, member)
      touched[#touched + 1] = run
    end
    touched[#touched + 1] = cp
    written = written + 1
  end
end
if written > 0 then
  redis.call('ZADD', KEYS[3], 0, enct)
  if maxlen > 0 then
    event[#event + 1] = 'n'
    event[#event + 1] = tostring(written)
    publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, event)
    touched[#touched + 1] = KEYS[5]
    if ttl == 0 then redis.call('PERSIST', KEYS[5]) end
  end
end
expire_all(ttl, touched)
return written
