-- store_write.lua: applies the puts and deletes of store items in order, with their index entries,
-- then sweeps a bounded number of index entries of expired items (package redisstore).
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns". Every other key is built from ARGV[1],
--            carries the same hash tag and so lives in KEYS[1]'s slot:
--            {P}:exp (zset), {P}:n:NS (zset), {P}:x:NS (zset), {P}:i:NS:K (hash)
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> sweep budget: index entries of expired items to remove at most (0 for none)
-- ARGV[3] -> n, the number of operations; ARGV[4 ..] n groups of 7 arguments:
--            kind ("p" put, "d" delete), registry member of the namespace, encoded key,
--            TTL in milliseconds (0: none), value (canonical JSON), number of vectors,
--            float32 vectors (the last three empty for a delete)
-- Returns: {items created, index entries swept}; "DATALOSS <what>", before anything is written, for a
--          registry without its marker member "", or when an operation's namespace is in the registry
--          without its index (unless {P}:exp names it).
-- Work bound: O(operations) (each O(log n), plus its value and vectors), and ARGV[2] index entries swept.

local registry_lost = check_store_registry(KEYS[1])
if registry_lost then return registry_lost end
local base = ARGV[1]
local registry = KEYS[1]
local expkey = base .. 'exp'
local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

-- Integers as Redis arguments: never through tostring, which keeps 14 digits.
local function int(x)
  return string.format('%.0f', x)
end

-- The encoded namespace of a registry member: what follows its "\0\0".
local function ns_of(member)
  local at = string.find(member, '\0\0', 1, true)
  return string.sub(member, at + 2)
end

local function put(member, k, ttl, value, nvec, w)
  local ns = ns_of(member)
  local key = base .. 'i:' .. ns .. ':' .. k
  local old = redis.call('HMGET', key, 'c', 'u')
  local created, fresh = old[1], 0
  local updated = now_us
  if created then
    local before = tonumber(old[2])
    if before and before >= updated then updated = before + 1 end
    redis.call('DEL', key)
  else
    created, fresh = int(now_us), 1
  end
  local fields = {'v', value, 'c', created, 'u', int(updated)}
  if ttl > 0 then
    fields[#fields + 1] = 't'
    fields[#fields + 1] = int(ttl)
  end
  if nvec > 0 then
    for _, f in ipairs({'n', int(nvec), 'w', w}) do fields[#fields + 1] = f end
  end
  redis.call('HSET', key, unpack(fields))
  redis.call('ZADD', base .. 'n:' .. ns, int(updated), k)
  local xkey = base .. 'x:' .. ns
  if ttl > 0 then
    local at = now_ms + ttl
    redis.call('PEXPIREAT', key, int(at))
    redis.call('ZADD', xkey, int(at), k)
    local due = tonumber(redis.call('ZSCORE', expkey, member))
    if not due or due > at then redis.call('ZADD', expkey, int(at), member) end
  else
    redis.call('ZREM', xkey, k)
  end
  redis.call('ZADD', registry, 0, member)
  return fresh
end

local function delete(member, k)
  local ns = ns_of(member)
  redis.call('DEL', base .. 'i:' .. ns .. ':' .. k)
  redis.call('ZREM', base .. 'n:' .. ns, k)
  redis.call('ZREM', base .. 'x:' .. ns, k)
  store_drop_if_empty(base, registry, member, ns)
end

-- Removes the index entries of items whose TTL ran out, namespace by namespace in
-- the order their earliest expiry falls due, budget entries at most.
local function sweep(budget)
  local swept = 0
  if budget <= 0 then return 0 end
  local due = redis.call('ZRANGEBYSCORE', expkey, '-inf', '(' .. int(now_ms), 'LIMIT', 0, budget)
  for _, member in ipairs(due) do
    if swept >= budget then break end
    local ns = ns_of(member)
    local nkey, xkey = base .. 'n:' .. ns, base .. 'x:' .. ns
    local gone = redis.call('ZRANGEBYSCORE', xkey, '-inf', '(' .. int(now_ms), 'LIMIT', 0, budget - swept)
    for _, k in ipairs(gone) do
      local left = redis.call('PTTL', base .. 'i:' .. ns .. ':' .. k)
      if left == -2 then
        redis.call('ZREM', nkey, k)
        redis.call('ZREM', xkey, k)
        swept = swept + 1
      elseif left == -1 then
        redis.call('ZREM', xkey, k)
      else
        redis.call('ZADD', xkey, int(now_ms + left), k)
      end
    end
    if not store_drop_if_empty(base, registry, member, ns) then
      local head = redis.call('ZRANGE', xkey, 0, 0, 'WITHSCORES')
      if #head == 0 then
        redis.call('ZREM', expkey, member)
      else
        redis.call('ZADD', expkey, head[2], member)
      end
    end
  end
  return swept
end

local n = tonumber(ARGV[3])
-- Before the first write: a namespace the registry names has its index (see store_scan.lua), and one
-- that lost it would be made anew with only what this call puts.
for i = 0, n - 1 do
  local member = ARGV[4 + 7 * i + 1]
  local ns = ns_of(member)
  if redis.call('EXISTS', base .. 'n:' .. ns) == 0 and redis.call('ZSCORE', registry, member) then
    local lost = store_index_lost(base, member, ns)
    if lost then return lost end
  end
end
local created = 0
for i = 0, n - 1 do
  local at = 4 + 7 * i
  local kind, member, k = ARGV[at], ARGV[at + 1], ARGV[at + 2]
  if kind == 'p' then
    created = created + put(member, k, tonumber(ARGV[at + 3]), ARGV[at + 4],
      tonumber(ARGV[at + 5]), ARGV[at + 6])
  else
    delete(member, k)
  end
end
return {created, sweep(tonumber(ARGV[2]))}
