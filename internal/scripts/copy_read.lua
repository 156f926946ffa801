-- copy_read.lua: one bounded page of a thread for CopyThread (the source side); writes nothing.
-- KEYS[1] thread head hash of the source
-- KEYS[2] thread registry zset of the source's shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] the generation the first page read ("" on the first page)
-- ARGV[4] part: "ns" (a page of the namespace set), "cps" (a page of a namespace's checkpoints, in id
--         order), "blobs" (a page of a namespace's values) or "lost" (whether checkpoints a copy took
--         point to values their values hash lacks, after the copy's check found one missing)
-- ARGV[5] encoded namespace (parts cps, blobs and lost)
-- ARGV[6] cursor: ns and blobs: the SSCAN/HSCAN cursor ("0" to start); cps: the last id read ("" to start);
--         lost: unused
-- ARGV[7] budget: members, checkpoints or fields per page, at most (SSCAN and HSCAN take it as COUNT)
-- ARGV[8 ..] part lost: checkpoint ids (at most ARGV[7] are read)
-- Returns: {""} when the thread does not exist, expired, or was replaced since the first page; else
--          {generation, next cursor ("0" for ns and blobs, "" for cps, at the end), then: ns: namespaces;
--           cps: {id, checkpoint hash as field, value, ...} per checkpoint; blobs: field, value, ...};
--          lost: {generation, ""} when none of the checkpoints given that exist lacks a value.
--          "DATALOSS <what>" for a lost head, namespace set, namespace index (cps: a namespace the set names
--          without its index) or indexed checkpoint hash, or (blobs, first page) a lost values hash: none
--          while the namespace's newest checkpoint points to a value; or (lost) a value that a checkpoint
--          given points to and its values hash lacks.
-- Work bound: O(ARGV[7]) members, fields or checkpoints (each O(its fields)); a page of values holds about
--          2 MiB at most (hscan_bounded), plus one HSCAN's; a first page of values without a values hash
--          reads one checkpoint hash; lost: at most ARGV[7] checkpoints, each O(its fields).
local sb, enct, part, encns, cursor = ARGV[1], ARGV[2], ARGV[4], ARGV[5], ARGV[6]
local budget = tonumber(ARGV[7])
local gen, state, detail = thread_state(sb, enct, now_ms(), true)
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' or (ARGV[3] ~= '' and ARGV[3] ~= gen) then return {''} end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
if part == 'ns' then
  local lost = check_gen(gb, nil)
  if lost then return lost end
  local r = redis.call('SSCAN', gb .. ':ns', cursor, 'COUNT', budget)
  local out = {gen, r[1]}
  for _, m in ipairs(r[2]) do out[#out + 1] = m end
  return out
end
local nb = gb .. ':n:' .. encns
if part == 'lost' then
  -- After a copy's check found a value missing: a copied checkpoint that still exists and points to a value
  -- its values hash lacks is lost data; none is a reclaim during the copy (the check's NOTFOUND).
  local blobs = nb .. ':blobs'
  for i = 8, math.min(#ARGV, 7 + budget) do
    local key = nb .. ':cp:' .. ARGV[i]
    local flat = redis.call('HGETALL', key)
    for j = 1, #flat, 2 do
      if string.sub(flat[j], 1, 2) == 'c:' then
        local f = blob_field(string.sub(flat[j], 3), flat[j + 1])
        if redis.call('HEXISTS', blobs, f) == 0 then return dataloss('value ' .. f .. ' of ' .. key .. ' in ' .. blobs) end
      end
    end
  end
  return {gen, ''}
end
if part == 'blobs' then
  local blobs = nb .. ':blobs'
  if cursor == '0' and redis.call('EXISTS', blobs) == 0 then
    -- No values hash: none to copy only when no checkpoint points to a value. The newest one of the
    -- namespace stands for them (one hash): pointing to one, the values hash was lost. (Checkpoints the
    -- copy took and a Prune or DeleteForRuns deleted since are the "check" phase's MISSING.)
    local top = redis.call('ZREVRANGE', nb .. ':idx', '0', '0')
    if top[1] then
      local flat = redis.call('HGETALL', nb .. ':cp:' .. top[1])
      for i = 1, #flat, 2 do
        if string.sub(flat[i], 1, 2) == 'c:' then return dataloss('values hash ' .. blobs) end
      end
    end
  end
  local r = hscan_bounded(blobs, cursor, budget)
  local out = {gen, r[1]}
  for _, v in ipairs(r[2]) do out[#out + 1] = v end
  return out
end
-- A namespace the set names has its index: one lost would copy as a namespace emptied meanwhile.
local lost = check_gen(gb, encns)
if lost then return lost end
local min = '-'
if cursor ~= '' then min = '(' .. cursor end
local ids = redis.call('ZRANGEBYLEX', nb .. ':idx', min, '+', 'LIMIT', 0, budget)
local nextc = ''
if #ids == budget then nextc = ids[#ids] end
local out = {gen, nextc}
for _, id in ipairs(ids) do
  local flat = redis.call('HGETALL', nb .. ':cp:' .. id)
  if #flat == 0 then return dataloss('checkpoint hash ' .. nb .. ':cp:' .. id) end
  out[#out + 1] = {id, flat}
end
return out
