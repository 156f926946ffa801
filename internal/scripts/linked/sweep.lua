-- sweep.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
-- Splits s on the byte "\0" (binary safe). O(#s).
local function split0(s)
  local out, from = {}, 1
  while true do
    local at = string.find(s, '\0', from, true)
    if not at then
      out[#out + 1] = string.sub(s, from)
      return out
    end
    out[#out + 1] = string.sub(s, from, at - 1)
    from = at + 1
  end
end
-- Lets a script that frees memory run on a full Redis. Redis refuses a script's first write that may grow
-- memory (ZADD, SADD, XADD...) while it is over maxmemory, and no write after the script's first one; so a
-- script whose every write is checked beforehand is refused whole or runs whole. A script that deletes
-- (DeleteThread, Prune, DeleteForRuns, reclaim, Sweep) calls this first: its first write is then the DEL of
-- a key of its shard that never exists, which changes nothing and is not replicated, and what it adds while
-- it frees (a reclaim queue entry, a keep set, an event) is allowed. O(1).
local function may_run_full(sb)
  redis.call('DEL', sb .. 'never')
end
-- The server's clock in Unix milliseconds. O(1).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Makes a thread's generation invisible at once: its head and registry entry go,
-- and the generation is queued for reclaim from time 'due'. O(log threads).
local function retire(sb, enct, gen, due)
  if gen then redis.call('ZADD', sb .. 'gc', due, enct .. '\0' .. gen) end
  redis.call('DEL', sb .. 't:' .. enct)
  redis.call('ZREM', sb .. 'threads', enct)
end
-- Deletes one checkpoint of a generation with its entries in every index. O(log n).
local function drop_checkpoint(sb, enct, encns, gen, id)
  local gb = sb .. 't:' .. enct .. ':g:' .. gen
  local nb = gb .. ':n:' .. encns
  local cp = nb .. ':cp:' .. id
  local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
  local run = redis.call('HGET', cp, 'r')
  if run then redis.call('SREM', run, member) end
  redis.call('ZREM', nb .. ':idx', id)
  redis.call('ZREM', gb .. ':idx', id .. '\0' .. encns)
  redis.call('ZREM', sb .. 'all', member)
  return redis.call('UNLINK', cp)
end
-- Reclaims up to budget units of work of one queued generation (a unit: one
-- checkpoint dropped, or one namespace's index and values unlinked; UNLINK frees
-- large values off the main thread). Returns the units used and whether the
-- generation is fully reclaimed (its queue entry is then removed). O(budget log n).
local function reclaim_gen(sb, entry, budget)
  local parts = split0(entry)
  local enct, gen = parts[1], parts[2]
  local gb = sb .. 't:' .. enct .. ':g:' .. gen
  local used = 0
  while used < budget do
    local encns = redis.call('SRANDMEMBER', gb .. ':ns')
    if encns then
      local nb = gb .. ':n:' .. encns
      local want = budget - used
      local ids = redis.call('ZRANGE', nb .. ':idx', 0, want - 1)
      for _, id in ipairs(ids) do drop_checkpoint(sb, enct, encns, gen, id) end
      used = used + #ids
      if #ids < want then
        redis.call('UNLINK', nb .. ':idx', nb .. ':blobs', nb .. ':keep', nb .. ':pkeep', nb .. ':need')
        redis.call('SREM', gb .. ':ns', encns)
        used = used + 1
      end
    else
      -- No namespace left: entries of the thread index whose namespace was lost.
      local want = math.max(budget - used, 1)
      local rest = redis.call('ZRANGE', gb .. ':idx', 0, want - 1)
      for _, m in ipairs(rest) do
        local p = split0(m)
        drop_checkpoint(sb, enct, p[2] or '', gen, p[1])
        redis.call('ZREM', gb .. ':idx', m)
      end
      used = used + #rest + 1
      if #rest < want then
        redis.call('UNLINK', gb .. ':idx', gb .. ':ns')
        redis.call('ZREM', sb .. 'gc', entry)
        return used, true
      end
    end
  end
  return used, false
end
-- The key of the pending writes a PutWrites stored before their checkpoint exists (put_writes.lua), and
-- the member of the shard's registry of such keys (sb .. 'early', score: the time from which they may be
-- reclaimed). O(1).
local function early_key(sb, enct, encns, id)
  return sb .. 't:' .. enct .. ':early:' .. encns .. ':' .. id
end
-- Reclaims up to n early writes whose checkpoint never came and whose time (ms, a number or its decimal
-- string) has come, and returns how many. O(n log n).
local function reclaim_early(sb, n, now)
  local due = redis.call('ZRANGEBYSCORE', sb .. 'early', '-inf', now, 'LIMIT', '0', n)
  for _, m in ipairs(due) do
    local p = split0(m)
    redis.call('UNLINK', early_key(sb, p[1], p[2], p[3]))
    redis.call('ZREM', sb .. 'early', m)
  end
  return #due
end
-- Reclaims up to budget units from the generations of the shard's queue that are due
-- by now (ms: a number, or its decimal string, which spares Redis a conversion). Returns the units used and
-- whether due work remains. O(budget log n).
local function reclaim_due(sb, budget, now)
  local used = 0
  while used < budget do
    local due = redis.call('ZRANGEBYSCORE', sb .. 'gc', '-inf', now, 'LIMIT', '0', '1')
    if #due == 0 then return used, false end
    local u = reclaim_gen(sb, due[1], budget - used)
    used = used + u
  end
  return used, #redis.call('ZRANGEBYSCORE', sb .. 'gc', '-inf', now, 'LIMIT', '0', '1') > 0
end
-- Retires up to n threads of the shard whose lease ran out by now, and returns how many it retired. n and
-- now (ms) go to Redis as given: numbers, or decimal strings, which spare it a conversion.
-- O(n log threads).
local function retire_expired(sb, n, now)
  local expired = redis.call('ZRANGEBYSCORE', sb .. 'threads', '1', now, 'LIMIT', '0', n)
  for _, enct in ipairs(expired) do
    retire(sb, enct, redis.call('HGET', sb .. 't:' .. enct, 'g'), now)
  end
  return #expired
end
-- sweep.lua: one bounded step of reclaiming a shard's garbage: retires threads whose lease ran out and
-- reclaims queued generations (deleted, expired, replaced or abandoned copies), then early pending writes
-- whose checkpoint never came (put_writes.lua) once their time has come.
-- KEYS[1] thread registry zset of the shard
-- KEYS[2] reclaim queue zset of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] reclaim budget: units of work this call may spend (a unit: one checkpoint dropped, or one
--         namespace's index and values unlinked, or one expired thread retired, or one early write unlinked)
-- ARGV[3] a reclaim queue entry (encoded thread \0 generation) to work on only, or "" for every due one
-- Returns: {units used, 1 when due work remains (of the entry given, or of the shard), else 0}.
-- Work bound: O(ARGV[2] log n).
local sb, budget, only = ARGV[1], tonumber(ARGV[2]), ARGV[3]
may_run_full(sb) -- it frees memory: it runs on a full Redis (lib.lua)
local now = now_ms()
if only ~= '' then
  if not redis.call('ZSCORE', KEYS[2], only) then return {0, 0} end
  local used, done = reclaim_gen(sb, only, budget)
  if done then return {used, 0} end
  return {used, 1}
end
local retired = retire_expired(sb, budget, now)
local used, more = reclaim_due(sb, budget - retired, now)
used = used + retired
local early = 0
if used < budget then early = reclaim_early(sb, budget - used, now) end
used = used + early
if more or retired == budget or (early > 0 and used == budget) then return {used, 1} end
return {used, 0}
