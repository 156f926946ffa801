-- blob_gc.lua: one bounded step of removing the values no checkpoint of a namespace points to any more
-- (after DeleteForRuns or Prune deleted checkpoints). Mark, then sweep:
--   mark:  walks the namespace index from the cursor, adding the blob fields each checkpoint points to to
--          the namespace's keep set (created anew on the first step, with the member \0 job token that marks
--          it as this job's; while it exists, every Put to the namespace adds the fields it points to as well);
--   sweep: scans the values hash from the cursor (HSCAN) and deletes the fields the keep set lacks; when
--          the scan ends, the keep set goes.
--   A step whose keep set is no longer this job's (another job started on the namespace and made it anew,
--   dropping the marks this one had made, or it was lost) ends the job and deletes nothing: sweeping with
--   marks lost would delete values that checkpoints point to. The other job reclaims.
-- KEYS[1] thread head hash
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] the generation the job works on
-- ARGV[4] encoded namespace
-- ARGV[5] phase: "mark" or "sweep"
-- ARGV[6] cursor: mark: "" to start, else the last id marked; sweep: "0" to start, else the HSCAN cursor
-- ARGV[7] budget: checkpoints to mark, or fields to scan, at most
-- ARGV[8] the job's token: 1 to 16 characters of [a-z2-7] (keys.NewGen), one per job
-- Returns: {phase to run next ("mark", "sweep" or "" when done), its cursor, values deleted by this step}.
--          Done at once when the thread's generation is no longer ARGV[3] (deleted or replaced: the
--          reclaim of the old generation takes everything), or when the keep set is not this job's.
-- Work bound: O(ARGV[7]) commands (a checkpoint's fields when marking); a sweep reads about 2 MiB of values
--          at most (hscan_bounded), plus one HSCAN's.
local sb, enct, gen, encns, phase, cursor = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
may_run_full(sb) -- it frees memory: it runs on a full Redis (lib.lua)
local budget = tonumber(ARGV[7])
local nb = sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns
local keep = nb .. ':keep'
local owner = '\0' .. ARGV[8] -- no blob field starts with the byte 0
if redis.call('HGET', KEYS[1], 'g') ~= gen then
  -- The job ends; its keep set goes with it (the namespace may have left the generation's set, whose
  -- reclaim would not find it).
  if redis.call('SISMEMBER', keep, owner) == 1 then redis.call('UNLINK', keep) end
  return {'', '', 0}
end
if phase == 'mark' then
  if cursor == '' and redis.call('EXISTS', nb .. ':idx') == 0 then
    return {'', '', 0} -- the namespace was emptied (its values with it): nothing to reclaim, no keep set made
  elseif cursor == '' then
    redis.call('UNLINK', keep)
    redis.call('SADD', keep, owner)
  elseif redis.call('SISMEMBER', keep, owner) == 0 then
    return {'', '', 0}
  end
  local min = '-'
  if cursor ~= '' then min = '(' .. cursor end
  local ids = redis.call('ZRANGEBYLEX', nb .. ':idx', min, '+', 'LIMIT', 0, budget)
  for _, id in ipairs(ids) do
    -- The versions only: the names, then the "c:" fields (pending writes' values never enter Lua).
    local cpkey = nb .. ':cp:' .. id
    local cs = {}
    for _, f in ipairs(redis.call('HKEYS', cpkey)) do
      if string.sub(f, 1, 2) == 'c:' then cs[#cs + 1] = f end
    end
    if #cs > 0 then
      local vers = chunked('HMGET', cpkey, cs, 1000)
      local fields = {}
      for j, f in ipairs(cs) do
        if vers[j] then fields[#fields + 1] = blob_field(string.sub(f, 3), vers[j]) end
      end
      if #fields > 0 then chunked('SADD', keep, fields, 1000) end
    end
  end
  if #ids < budget then return {'sweep', '0', 0} end
  return {'mark', ids[#ids], 0}
end
if redis.call('SISMEMBER', keep, owner) == 0 then return {'', '', 0} end
local r = hscan_bounded(nb .. ':blobs', cursor, budget)
local drop = {}
for i = 1, #r[2], 2 do
  local f = r[2][i]
  if f ~= '#' and redis.call('SISMEMBER', keep, f) == 0 then drop[#drop + 1] = f end -- "#": the hash's own
end
if #drop > 0 then chunked('HDEL', nb .. ':blobs', drop, 1000) end
if r[1] == '0' then
  redis.call('UNLINK', keep)
  return {'', '', #drop}
end
return {'sweep', r[1], #drop}
