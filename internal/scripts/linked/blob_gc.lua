-- blob_gc.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
-- Calls cmd on key with the first n items of list (all of them when n is nil) as arguments, at most step
-- at a time (Lua's unpack is limited to a few thousand values), and concatenates table replies. O(n).
local function chunked(cmd, key, list, step, n)
  n = n or #list
  if n <= step then return redis.call(cmd, key, unpack(list, 1, n)) end
  local out = {}
  for i = 1, n, step do
    local last = math.min(i + step - 1, n)
    local r = redis.call(cmd, key, unpack(list, i, last))
    if type(r) == 'table' then
      for j = 1, #r do out[#out + 1] = r[j] end
    end
  end
  return out
end
-- Scans a hash from cursor (HSCAN) until about count fields, or fields whose values hold 2 MiB, have been
-- read, whichever comes first: HSCAN's COUNT starts at 1 and doubles, at most to what the bytes left allow
-- at the largest value seen, so a page of large values ends early (the values hash of 1 MiB values: a few
-- per call, where a COUNT of 64 read 64 MiB into Lua). At most 12 HSCAN calls (a sparse hash can answer
-- pages with nothing in them). Returns the HSCAN reply's shape: {next cursor ("0" at the end), {field,
-- value, ...}}. O(count) fields, and about 2 MiB of values plus one HSCAN's.
local function hscan_bounded(key, cursor, count)
  local maxbytes = 2097152
  local out, n, bytes, largest, step, calls = {}, 0, 0, 1, 1, 0
  repeat
    calls = calls + 1
    local r = redis.call('HSCAN', key, cursor, 'COUNT', step)
    cursor = r[1]
    local page = r[2]
    for i = 1, #page, 2 do
      local size = #page[i + 1]
      out[#out + 1] = page[i]
      out[#out + 1] = page[i + 1]
      n = n + 1
      bytes = bytes + size
      if size > largest then largest = size end
    end
    step = math.min(step * 2, count - n, math.floor((maxbytes - bytes) / largest))
  until cursor == '0' or step < 1 or calls >= 12
  return {cursor, out}
end
-- n, an integer >= 0, in decimal. Below 100 by string.char: Lua writes a number with sprintf("%.14g"),
-- which costs more than the rest of most callers (a blob field, an event field). O(1).
local function decimal(n)
  if n < 10 then return string.char(48 + n) end
  if n < 100 then
    local u = n % 10
    return string.char(48 + (n - u) / 10, 48 + u)
  end
  return string.format('%d', n)
end
-- The blob field of a channel version: len(channel) ":" channel version. O(1).
local function blob_field(channel, version)
  return decimal(string.len(channel)) .. ':' .. channel .. version
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
