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
