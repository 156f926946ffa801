-- delete_thread.lua: removes a thread: every namespace, checkpoint, write, value and index entry; announces it.
-- KEYS[1] namespaces set of the thread
-- KEYS[2] index zset of the thread: id \0 namespace
-- KEYS[3] thread registry zset of the shard
-- KEYS[4] index zset of every checkpoint of the shard
-- KEYS[5] event stream of the thread
-- KEYS[6] event feed of the shard
-- ARGV[1] shard base: thread bases are base .. "t:" .. thread
-- ARGV[2] encoded thread
-- ARGV[3] how long the thread's event stream stays after the deletion, in milliseconds
-- ARGV[4 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- Returns: the number of checkpoints deleted (0 for an unknown thread, which is announced by no event).
-- The event gets the field "n", the number of checkpoints deleted.
local base, enct = ARGV[1], ARGV[2]
local maxlen, feedmaxlen, event = event_spec(4)
local tbase = base .. 't:' .. enct
local deleted = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local parts = split0(member)
  deleted = deleted + drop_checkpoint(base, enct, parts[2], parts[1])
end
for _, encns in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  redis.call('DEL', tbase .. ':n:' .. encns .. ':idx', tbase .. ':n:' .. encns .. ':blobs')
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], enct)
if deleted > 0 and maxlen > 0 then
  event[#event + 1] = 'n'
  event[#event + 1] = tostring(deleted)
  publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, event)
  redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[3]))
end
return deleted
