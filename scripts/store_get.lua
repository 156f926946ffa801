-- store_get.lua: reads store items by namespace and key, extending their TTL when asked (package redisstore).
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns" (names the slot; the item hashes
--            {P}:i:NS:K and the expiry indexes {P}:x:NS are built from ARGV[1] and share its hash tag)
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> "1" to extend the TTL of the items found (those stored with one), "0" not to
-- ARGV[3 ..] -> pairs: encoded namespace, encoded key
-- Returns: one entry per pair, in order: {value, created, updated}, or false when the item is absent

local base = ARGV[1]
local refresh = ARGV[2] == '1'
local now_ms
if refresh then
  local clock = redis.call('TIME')
  now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
end

local out = {}
for i = 3, #ARGV, 2 do
  local ns, k = ARGV[i], ARGV[i + 1]
  local key = base .. 'i:' .. ns .. ':' .. k
  local r = redis.call('HMGET', key, 'v', 'c', 'u', 't')
  if not r[1] then
    out[#out + 1] = false
  else
    local ttl = tonumber(r[4])
    if refresh and ttl then
      local at = string.format('%.0f', now_ms + ttl)
      redis.call('PEXPIREAT', key, at)
      redis.call('ZADD', base .. 'x:' .. ns, at, k)
    end
    out[#out + 1] = {r[1], r[2], r[3]}
  end
end
return out
