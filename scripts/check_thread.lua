-- check_thread.lua: reads what the consistency check verifies of one thread, as one snapshot; writes nothing.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] index zset of every checkpoint of the shard: id \0 thread \0 namespace \0 generation
-- ARGV[1] shard base: thread bases are base .. "t:" .. thread, run index keys start with base .. "run:"
-- ARGV[2] encoded thread
-- Returns: {} for a thread that does not exist or expired; {"DATALOSS <what>"} for a lost head or
--          registry entry; else
--          {registered (1 or 0), thread index members, then one entry per namespace that the namespaces
--          set or a thread index member names:
--          {encoded namespace, in the namespaces set (1 or 0), namespace index members,
--           blobs hash as field, value, ..., checkpoints}}
--          where checkpoints holds one entry per id of the namespace index or of the thread index, then
--          one per parent those name that is neither: {id, checkpoint hash as field, value, ... (empty
--          when there is no such hash), in the shard index (1 or 0), in its run index (1 or 0; -1 without
--          a run; -2 when its run key lies outside the shard)}.
-- Work bound: O(checkpoints and values of the thread) -- NOT yet bounded.
local base, enct = ARGV[1], ARGV[2]
local gen, state, detail = thread_state(base, enct, now_ms())
if state == 'lost' then return {'DATALOSS ' .. detail} end
if state ~= 'live' then return {} end
local tbase = base .. 't:' .. enct .. ':g:' .. gen

local registered = 1
local tidx = redis.call('ZRANGE', tbase .. ':idx', 0, -1)

-- Namespaces in order of first mention, each with its checkpoint ids in order of first mention.
local order, byns = {}, {}
local function namespace(encns)
  local e = byns[encns]
  if not e then
    e = {ids = {}, seen = {}, inset = 0}
    byns[encns] = e
    order[#order + 1] = encns
  end
  return e
end
local function add(e, id)
  if not e.seen[id] then
    e.seen[id] = true
    e.ids[#e.ids + 1] = id
  end
end

for _, encns in ipairs(redis.call('SMEMBERS', tbase .. ':ns')) do
  namespace(encns).inset = 1
end
for _, member in ipairs(tidx) do
  local parts = split0(member)
  if #parts == 2 then add(namespace(parts[2]), parts[1]) end -- others are reported from tidx
end

local runbase = base .. 'run:'
local out = {registered, tidx}
for _, encns in ipairs(order) do
  local e = byns[encns]
  local nsbase = tbase .. ':n:' .. encns
  local nsidx = redis.call('ZRANGE', nsbase .. ':idx', 0, -1)
  for _, id in ipairs(nsidx) do add(e, id) end
  local cps = {}
  local indexed = #e.ids
  local i = 1
  while i <= #e.ids do
    local id = e.ids[i]
    local flat = redis.call('HGETALL', nsbase .. ':cp:' .. id)
    local inall, inrun = 0, -1
    local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
    if #flat > 0 then
      if redis.call('ZSCORE', KEYS[3], member) then inall = 1 end
      for j = 1, #flat, 2 do
        local f = flat[j]
        if f == 'r' then
          local run = flat[j + 1]
          if string.sub(run, 1, string.len(runbase)) ~= runbase then
            inrun = -2
          else
            inrun = redis.call('SISMEMBER', run, member)
          end
        elseif f == 'p' and i <= indexed then
          add(e, flat[j + 1]) -- one level of parents: those of indexed checkpoints
        end
      end
    end
    cps[#cps + 1] = {id, flat, inall, inrun}
    i = i + 1
  end
  out[#out + 1] = {encns, e.inset, nsidx, redis.call('HGETALL', nsbase .. ':blobs'), cps}
end
return out
