-- restore_thread.lua: writes a dumped thread into an empty thread, as a new generation, atomically.
-- KEYS[1] thread head hash of the target
-- KEYS[2] thread registry zset of the target's shard
-- KEYS[3] index zset of every checkpoint of the target's shard
-- KEYS[4] event stream of the target thread
-- KEYS[5] event feed of the target's shard
-- ARGV[1] shard base of the target "P:{N}:"
-- ARGV[2] encoded target thread
-- ARGV[3] TTL in milliseconds, 0 to keep forever
-- ARGV[4] the new generation
-- ARGV[5 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs;
--            the event, sent when a checkpoint was written, gets the field "n", the number written
-- then records: "ns", encoded namespace, n, then n blob field/value pairs;
--            "cp", id, n, then n checkpoint field/value pairs (of the namespace last named).
--            A checkpoint's "r" field names its run index in the target's shard.
-- Returns: the number of checkpoints written, or the error "EXISTS" when the target has checkpoints, or
--          "DATALOSS <what>" when its head or registry entry is missing; both before any write.
-- Work bound: O(size of the dump) -- NOT yet bounded.
local sb, enct, ttl, gen = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local maxlen, feedmaxlen, event, at = event_spec(5)
local now = now_ms()
local old, state, detail = thread_state(sb, enct, now)
if state == 'lost' then return dataloss(detail) end
if state == 'live' then return redis.error_reply('EXISTS target thread already has checkpoints') end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
local written, i = 0, at
local encns, nb = nil, nil
while i <= #ARGV do
  local kind, name, n = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local fv = {}
  for j = i + 3, i + 2 + 2 * n do fv[#fv + 1] = ARGV[j] end
  i = i + 3 + 2 * n
  if kind == 'ns' then
    encns = name
    nb = gb .. ':n:' .. encns
    redis.call('SADD', gb .. ':ns', encns)
    if #fv > 0 then chunked('HSET', nb .. ':blobs', fv, 1000) end
  else
    local cp = nb .. ':cp:' .. name
    local member = name .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
    chunked('HSET', cp, fv, 1000)
    redis.call('ZADD', nb .. ':idx', 0, name)
    redis.call('ZADD', gb .. ':idx', 0, name .. '\0' .. encns)
    redis.call('ZADD', KEYS[3], 0, member)
    local run = redis.call('HGET', cp, 'r')
    if run then redis.call('SADD', run, member) end
    written = written + 1
  end
end
if written > 0 then
  if state == 'expired' then retire(sb, enct, old, now) end
  redis.call('HSET', KEYS[1], 'g', gen)
  touch(sb, enct, ttl, now)
  if maxlen > 0 then
    event[#event + 1] = 'n'
    event[#event + 1] = tostring(written)
    publish(KEYS[4], KEYS[5], maxlen, feedmaxlen, event)
    if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) else redis.call('PERSIST', KEYS[4]) end
  end
end
return written
