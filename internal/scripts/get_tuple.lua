-- get_tuple.lua: reads one checkpoint (by id, or the latest of its namespace) with its values and writes.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id, or "" for the latest
-- KEYS[3] (optional) the values hash of the checkpoint the caller predicts the answer is; the caller reads
--         that checkpoint's hash (HGETALL) and its values (HMGET of KEYS[3]) in the same transaction, right
--         after this script
-- ARGV[5] TTL in milliseconds to renew the thread's lease with, 0 for no renewal
-- ARGV[6] (optional, with KEYS[3]) the checkpoint id the caller predicts the answer is
-- ARGV[7] (optional, with KEYS[3]) the predicted checkpoint's call token (its field "o")
-- ARGV[8] (optional) "1" to leave the values out when they hold more than 32 KiB (lib.lua's inline_bytes):
--         false in their place, the client reads them by plain HMGET (docs/storage-format.md, "Values out of
--         Lua"); ARGV[6] and ARGV[7] are then "" when nothing is predicted
-- Returns: nil when there is no such checkpoint (or its thread expired), else
--          {id, flat checkpoint hash, channel values aligned with its "c:" fields, parent's writes (legacy only),
--          the thread's generation}.
--          When the answer is the predicted checkpoint (same id, same token, format v >= 4 or no parent) and
--          KEYS[3] is its values hash, the hash and the values are false: the caller's HGETALL and HMGET read
--          them (neither enters Lua). With ARGV[8] "1", the values are false when they hold more than 32 KiB.
--          The error "DATALOSS <what>" when something the answer needs is missing: the thread's head (its
--          registry entry alone is an index the answer does not need: Put and the check report its loss),
--          an indexed checkpoint's hash, a value a channel version points to, the namespace
--          index of a namespace the thread lists.
-- Work bound: O(fields of the checkpoint) + O(log n); with ARGV[8] "1", at most 32 KiB of values enter Lua.
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
if KEYS[3] and KEYS[3] == nb .. ':blobs' and ARGV[6] == id then
  -- The token names the Put that wrote the hash's "c:" fields, the caller knows them.
  local h = redis.call('HMGET', cpkey, 'o', 'v', 'p')
  if h[1] and h[1] == ARGV[7] and ((tonumber(h[2]) or 0) >= 4 or not h[3]) then
    if ttl > 0 then touch(sb, enct, ttl, now()) end
    return {id, false, false, {}, gen}
  end
end
local found = read_checkpoint(cpkey, nb)
if not found then
  -- No such checkpoint, or its hash was lost: the index tells.
  if redis.call('ZSCORE', idx, id) then return dataloss('checkpoint hash ' .. cpkey) end
  return nil
end
local blobkey = nb .. ':blobs'
local fields = blob_fields(found[1], found[2])
local values = false
if ARGV[8] ~= '1' or not values_large(blobkey, fields) then
  local lost
  values, lost = read_values(cpkey, blobkey, fields)
  if lost then return lost end
end
if ttl > 0 then touch(sb, enct, ttl, now()) end
return {id, found[1], values, found[3], gen}
