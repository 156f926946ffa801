-- dump_thread.lua: reads a whole thread, every namespace, checkpoint and value, as one consistent snapshot.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- Returns: one entry per namespace: {encoded namespace, blobs hash as field, value, ...,
--          {id, checkpoint hash as field, value, ...}, ...} with checkpoints in id order; an empty list for
--          a thread that does not exist or expired. "DATALOSS <what>" for a lost head or checkpoint hash.
-- Work bound: O(checkpoints and values of the thread) -- NOT yet bounded.
local sb, enct = ARGV[1], ARGV[2]
local gen, state, detail = thread_state(sb, enct, now_ms())
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' then return {} end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
local out = {}
for _, encns in ipairs(redis.call('SMEMBERS', gb .. ':ns')) do
  local nb = gb .. ':n:' .. encns
  local entry = {encns, redis.call('HGETALL', nb .. ':blobs')}
  for _, id in ipairs(redis.call('ZRANGE', nb .. ':idx', 0, -1)) do
    local flat = redis.call('HGETALL', nb .. ':cp:' .. id)
    if #flat == 0 then return dataloss('checkpoint hash ' .. nb .. ':cp:' .. id) end
    entry[#entry + 1] = {id, flat}
  end
  out[#out + 1] = entry
end
return out
