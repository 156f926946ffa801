-- dump_thread.lua: reads a whole thread, every namespace, checkpoint and value, as one consistent snapshot.
-- KEYS[1] namespaces set of the thread
-- ARGV[1] thread base: namespace bases are base .. ":n:" .. namespace
-- Returns: one entry per namespace: {encoded namespace, blobs hash as field, value, ...,
--          {id, checkpoint hash as field, value, ...}, ...} with checkpoints in id order.
local base = ARGV[1]
local out = {}
for _, encns in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local nsbase = base .. ':n:' .. encns
  local entry = {encns, redis.call('HGETALL', nsbase .. ':blobs')}
  for _, id in ipairs(redis.call('ZRANGE', nsbase .. ':idx', 0, -1)) do
    local flat = redis.call('HGETALL', nsbase .. ':cp:' .. id)
    if #flat > 0 then entry[#entry + 1] = {id, flat} end
  end
  out[#out + 1] = entry
end
return out
