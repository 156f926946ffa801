-- store_get.lua: reads store items by namespace and key, extending their TTL when asked (package redisstore).
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns" (names the slot; the item hashes
--            {P}:i:NS:K and the expiry indexes {P}:x:NS are built from ARGV[1] and share its hash tag)
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> "1" to extend the TTL of the items found (those stored with one), "0" not to
-- ARGV[3 ..] -> pairs: encoded namespace, encoded key
-- Returns: one entry per pair, in order: {value, created, updated}, or false when the item is absent;
--          "DATALOSS <what>", before anything is written, for a registry without its marker member "", or
--          an item its namespace's index names whose hash is gone while its expiry index does not say it
--          expired.
-- Work bound: O(pairs) (an absent item costs one ZSCORE more, two when indexed).

local registry_lost = check_store_registry(KEYS[1])
if registry_lost then return registry_lost end
local base = ARGV[1]
local refresh = ARGV[2] == '1'
local now = lazy_clock() -- read once, when needed

-- Every read and check first, then the TTL extensions: no write before a DATALOSS.
local out, extend = {}, {}
for i = 3, #ARGV, 2 do
  local ns, k = ARGV[i], ARGV[i + 1]
  local key = base .. 'i:' .. ns .. ':' .. k
  local r = redis.call('HMGET', key, 'v', 'c', 'u', 't')
  if not r[1] then
    -- Absent. Still in its namespace's index, it expired when its expiry index says so, else it
    -- was lost.
    if redis.call('ZSCORE', base .. 'n:' .. ns, k) then
      local lost = store_item_lost(base, ns, k, now)
      if lost then return lost end
    end
    out[#out + 1] = false
  else
    local ttl = tonumber(r[4])
    if refresh and ttl then extend[#extend + 1] = {key, ns, k, string.format('%.0f', now() + ttl)} end
    out[#out + 1] = {r[1], r[2], r[3]}
  end
end
for _, e in ipairs(extend) do
  redis.call('PEXPIREAT', e[1], e[4])
  redis.call('ZADD', base .. 'x:' .. e[2], e[4], e[3])
end
return out
