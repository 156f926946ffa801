-- get_tuple.lua: reads one checkpoint (by id, or the latest of its namespace) with its values and writes.
-- KEYS[1] index zset of the (thread, namespace)
-- KEYS[2] blobs hash of the (thread, namespace)
-- KEYS[3] namespaces set of the thread   (TTL refresh only)
-- KEYS[4] index zset of the thread       (TTL refresh only)
-- ARGV[1] namespace base: checkpoint keys are base .. ":cp:" .. id
-- ARGV[2] checkpoint id, or "" for the latest
-- ARGV[3] TTL in milliseconds to refresh on read, 0 for no refresh
-- Returns: nil when there is no such checkpoint, else
--          {id, flat checkpoint hash, channel values aligned with its "c:" fields, parent's writes (legacy only)}.
local base, id, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local found
if id ~= '' then
  found = load_checkpoint(base .. ':cp:' .. id, KEYS[2], base)
else
  -- Latest: the greatest id whose checkpoint still exists. Entries of
  -- expired checkpoints are dropped on the way, so the top is read afresh.
  while true do
    local top = redis.call('ZREVRANGE', KEYS[1], 0, 0)
    if #top == 0 then break end
    found = load_checkpoint(base .. ':cp:' .. top[1], KEYS[2], base)
    if found then
      id = top[1]
      break
    end
    redis.call('ZREM', KEYS[1], top[1])
  end
end
if not found then return nil end
local touched = {base .. ':cp:' .. id, KEYS[1], KEYS[2], KEYS[3], KEYS[4]}
if ttl > 0 then
  -- The run index must live as long as the checkpoint it finds.
  local run = redis.call('HGET', touched[1], 'r')
  if run then touched[#touched + 1] = run end
end
expire_all(ttl, touched)
return {id, found[1], found[2], found[3]}
