-- check_shard.lua: reads one page of a shard-wide index with what its members name, as one snapshot; writes nothing.
-- KEYS[1] the index: the shard's index of every checkpoint (zset), one of its run indexes (set), or its
--         thread registry (zset)
-- KEYS[2] thread registry zset of the shard
-- ARGV[1] shard base: thread bases are base .. "t:" .. thread
-- ARGV[2] kind of the index: "all", "run" or "threads"
-- ARGV[3] cursor: zsets: "" for the first page, else the last member of the previous page; a run index
--         set: the SSCAN cursor ("" or "0" for the first page)
-- ARGV[4] page size (zsets)
-- ARGV[5] "" for the entries of every thread, or an encoded thread to return only its entries
--         (kinds "all" and "run")
-- Returns: {next cursor ("" after the last page, for sets too), then one item per member}: kind "threads": the member;
--          kinds "all" and "run": {member, 1 when its checkpoint hash exists (else 0; -1 for a member that
--          is not id \0 thread \0 namespace \0 generation; -2 for a member of a generation that is not its
--          thread's current one and is not queued for reclaim), the checkpoint's "r" field or false, then 1 or 0 for each of:
--          its thread is in the registry, the id is in the namespace index, the id is in the thread index,
--          the namespace is in the thread's namespace set}.
-- Entries of generations queued for reclaim are left out: the reclaim removes them.
-- Work bound: O(ARGV[4]) members (SSCAN takes it as COUNT), each O(log n).
local base, kind, cursor, page, only = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]

local members, next = {}, ''
if kind == 'run' then
  if cursor == '' then cursor = '0' end
  local r = redis.call('SSCAN', KEYS[1], cursor, 'COUNT', page)
  members = r[2]
  if r[1] ~= '0' then next = r[1] end
else
  local min = '-'
  if cursor ~= '' then min = '(' .. cursor end
  members = redis.call('ZRANGEBYLEX', KEYS[1], min, '+', 'LIMIT', 0, page)
  if #members == page then next = members[#members] end
end

local out = {next}
if kind == 'threads' then
  for _, m in ipairs(members) do out[#out + 1] = m end
  return out
end
for _, m in ipairs(members) do
  local parts = split0(m)
  local cur = nil
  if #parts == 4 then cur = redis.call('HGET', base .. 't:' .. parts[2], 'g') end
  if #parts ~= 4 then
    out[#out + 1] = {m, -1, false, 0, 0, 0, 0}
  elseif only ~= '' and parts[2] ~= only then
    -- another thread's entry
  elseif cur ~= parts[4] then
    if not redis.call('ZSCORE', base .. 'gc', parts[2] .. '\0' .. parts[4]) then
      out[#out + 1] = {m, -2, false, 0, 0, 0, 0}
    end
  else
    local id, enct, encns = parts[1], parts[2], parts[3]
    local tbase = base .. 't:' .. enct .. ':g:' .. cur
    local nsbase = tbase .. ':n:' .. encns
    local exists = redis.call('EXISTS', nsbase .. ':cp:' .. id)
    local run = false
    if exists == 1 then run = redis.call('HGET', nsbase .. ':cp:' .. id, 'r') end
    local function yes(r) if r then return 1 end return 0 end
    out[#out + 1] = {m, exists, run,
      yes(redis.call('ZSCORE', KEYS[2], enct)),
      yes(redis.call('ZSCORE', nsbase .. ':idx', id)),
      yes(redis.call('ZSCORE', tbase .. ':idx', id .. '\0' .. encns)),
      redis.call('SISMEMBER', tbase .. ':ns', encns)}
  end
end
return out
