-- put_writes.lua: stores the pending writes of one task against one checkpoint, and announces them, atomically.
-- KEYS[1] checkpoint hash (writes are its "w:" fields)
-- KEYS[2] index zset of the (thread, namespace)   (TTL refresh only)
-- KEYS[3] blobs hash of the (thread, namespace)    (TTL refresh only)
-- KEYS[4] namespaces set of the thread             (TTL refresh only)
-- KEYS[5] index zset of the thread                 (TTL refresh only)
-- KEYS[6] event stream of the thread
-- KEYS[7] event feed of the shard
-- ARGV[1] TTL in milliseconds, 0 to keep forever
-- ARGV[2] the largest write value to copy into the event, in bytes; -1 for none
-- ARGV[3 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- then quadruples: field, value, mode, channel; mode "o" overwrites (special channels),
--            "n" inserts only if the field is absent (regular writes: idempotent)
-- Returns: the number of writes stored, or the error "NOTFOUND" when the checkpoint does not exist.
-- The event lists the channels of the writes stored (field "ch": len ":" channel, repeated) and, within
-- the value bound, their stored values ("v:" position); no write stored, no event.
local cp = KEYS[1]
if redis.call('HEXISTS', cp, 'v') == 0 then
  return redis.error_reply('NOTFOUND checkpoint does not exist')
end
local bound = tonumber(ARGV[2])
local maxlen, feedmaxlen, event, at = event_spec(3)
local written, channels = 0, {}
for i = at, #ARGV, 4 do
  local ok
  if ARGV[i + 2] == 'o' then
    redis.call('HSET', cp, ARGV[i], ARGV[i + 1])
    ok = 1
  else
    ok = redis.call('HSETNX', cp, ARGV[i], ARGV[i + 1])
  end
  if ok == 1 then
    written = written + 1
    channels[#channels + 1] = string.len(ARGV[i + 3]) .. ':' .. ARGV[i + 3]
    if bound >= 0 and string.len(ARGV[i + 1]) <= bound then
      event[#event + 1] = 'v:' .. ((i - at) / 4)
      event[#event + 1] = ARGV[i + 1]
    end
  end
end
local touched = {KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]}
if written > 0 and maxlen > 0 then
  event[#event + 1] = 'ch'
  event[#event + 1] = table.concat(channels)
  publish(KEYS[6], KEYS[7], maxlen, feedmaxlen, event)
  touched[#touched + 1] = KEYS[6]
end
local ttl = tonumber(ARGV[1])
if ttl > 0 then
  -- The run index must live as long as the checkpoint it finds.
  local run = redis.call('HGET', cp, 'r')
  if run then touched[#touched + 1] = run end
end
expire_all(ttl, touched)
return written
