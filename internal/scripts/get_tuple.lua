-- get_tuple.lua: reads one checkpoint (by id, or the latest of its namespace) with its values and writes.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id, or "" for the latest
-- ARGV[5] TTL in milliseconds to renew the thread's lease with, 0 for no renewal
-- ARGV[6] (optional) "1" to leave the values out when they hold more than 32 KiB (lib.lua's inline_bytes):
--         false in their place, the client reads them by plain HMGET (docs/storage-format.md, "Values out of
--         Lua")
-- Returns: nil when there is no such checkpoint (or its thread expired), else
--          {id, flat checkpoint hash, channel values aligned with its "c:" fields, parent's writes (legacy only),
--          the thread's generation}.
--          With ARGV[6] "1", the values are false when they hold more than 32 KiB.
--          The error "DATALOSS <what>" when something the answer needs is missing: the thread's head (its
--          registry entry alone is an index the answer does not need: Put and the check report its loss),
--          an indexed checkpoint's hash, a value a channel version points to, the namespace
--          index of a namespace the thread lists.
-- Work bound: O(fields of the checkpoint) + O(log n); with ARGV[6] "1", at most 32 KiB of values enter Lua.
local sb, enct, encns, id, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
-- The clock is read only when needed (a lease to check or renew).
local now = lazy_clock()
local gen, state, detail = thread_state(sb, enct, now, true, KEYS[1])
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' then return nil end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns
local idx = nb .. ':idx'
local lost = check_gen(gb, encns)
if lost then return lost end
if id == '' then
  local top = redis.call('ZREVRANGE', idx, '0', '0')
  if #top == 0 then return nil end
  id = top[1]
end
local cpkey = nb .. ':cp:' .. id
local found = read_checkpoint(cpkey, nb)
if not found then
  -- No such checkpoint, or its hash was lost: the index tells.
  if redis.call('ZSCORE', idx, id) then return dataloss('checkpoint hash ' .. cpkey) end
  return nil
end
local blobkey = nb .. ':blobs'
local fields = blob_fields(found[1], found[2])
local values = false
if ARGV[6] ~= '1' or not values_large(blobkey, fields) then
  local lost
  values, lost = read_values(cpkey, blobkey, fields)
  if lost then return lost end
end
if ttl > 0 then touch(sb, enct, ttl, now()) end
return {id, found[1], values, found[3], gen}
