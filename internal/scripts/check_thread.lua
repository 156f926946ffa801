-- check_thread.lua: one bounded page of what the consistency check verifies of one thread; writes nothing.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] index zset of every checkpoint of the shard: id \0 thread \0 namespace \0 generation
-- ARGV[1] shard base: thread bases are base .. "t:" .. thread, run index keys start with base .. "run:"
-- ARGV[2] encoded thread
-- ARGV[3] the generation the first page read ("" on the first page)
-- ARGV[4] part: "tidx" (a page of the thread index), "ns" (a page of the namespace set), "nsidx" (a page of
--         a namespace index), "blobs" (a page of a namespace's values) or "cps" (the checkpoints given)
-- ARGV[5] encoded namespace (parts nsidx, blobs and cps)
-- ARGV[6] cursor: tidx and nsidx: the last member read ("" to start); ns and blobs: the SSCAN/HSCAN
--         cursor ("0" to start); cps: unused
-- ARGV[7] budget: members, fields or checkpoints per page, at most (SSCAN and HSCAN take it as COUNT)
-- ARGV[8 ..] part cps: checkpoint ids
-- Returns: {status, generation or detail, next cursor (tidx, nsidx: "" at the end; ns, blobs: "0" at the
--          end), then items}: status "" when the thread does not exist, expired or was replaced since the
--          first page; "lost" with the detail of the missing key; else "ok" and the generation. Items:
--          tidx, nsidx, ns: members; blobs: field, value, ...; cps: one {id, checkpoint hash as field,
--          value, ... (empty when there is no such hash), in the shard index (1 or 0), in its run index (1
--          or 0; -1 without a run; -2 when its run key lies outside the shard)} per id.
-- Work bound: O(ARGV[7]) members or fields, or at most ARGV[7] checkpoints (each O(its fields)); a page of
--          values holds about 2 MiB at most (hscan_bounded), plus one HSCAN's.
local base, enct, part, encns, cursor = ARGV[1], ARGV[2], ARGV[4], ARGV[5], ARGV[6]
local budget = tonumber(ARGV[7])
local gen, state, detail = thread_state(base, enct, now_ms())
if state == 'lost' then return {'lost', detail, ''} end
if state ~= 'live' or (ARGV[3] ~= '' and ARGV[3] ~= gen) then return {'', '', ''} end
local gb = base .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns

local function zpage(key)
  local min = '-'
  if cursor ~= '' then min = '(' .. cursor end
  local ms = redis.call('ZRANGEBYLEX', key, min, '+', 'LIMIT', 0, budget)
  local nextc = ''
  if #ms == budget then nextc = ms[#ms] end
  local out = {'ok', gen, nextc}
  for _, m in ipairs(ms) do out[#out + 1] = m end
  return out
end
local function scanpage(r)
  local out = {'ok', gen, r[1]}
  for _, m in ipairs(r[2]) do out[#out + 1] = m end
  return out
end

if part == 'tidx' then return zpage(gb .. ':idx') end
if part == 'nsidx' then return zpage(nb .. ':idx') end
if part == 'ns' then return scanpage(redis.call('SSCAN', gb .. ':ns', cursor, 'COUNT', budget)) end
if part == 'blobs' then return scanpage(hscan_bounded(nb .. ':blobs', cursor, budget)) end

local runbase = base .. 'run:'
local out = {'ok', gen, ''}
for i = 8, math.min(#ARGV, 7 + budget) do
  local id = ARGV[i]
  local flat = redis.call('HGETALL', nb .. ':cp:' .. id)
  local inall, inrun = 0, -1
  local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
  if #flat > 0 then
    if redis.call('ZSCORE', KEYS[3], member) then inall = 1 end
    for j = 1, #flat, 2 do
      if flat[j] == 'r' then
        local run = flat[j + 1]
        if string.sub(run, 1, string.len(runbase)) ~= runbase then
          inrun = -2
        else
          inrun = redis.call('SISMEMBER', run, member)
        end
      end
    end
  end
  out[#out + 1] = {id, flat, inall, inrun}
end
return out
