-- prune.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
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
-- The error every read returns for data that should exist and does not.
local function dataloss(what)
  return redis.error_reply('DATALOSS ' .. what)
end
-- The server's clock in Unix milliseconds. O(1).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The state of a thread from its head hash and its registry entry. O(log threads). now is the time
-- in ms, or a function giving it (called only when needed). With reading, a thread whose head exists
-- is judged from its head alone. head, when given, is the head's key (a script's KEYS[1]: not built again).
-- Returns gen (or nil), state, detail: state is
--   'live'    the thread exists: gen is its generation;
--   'none'    no such thread;
--   'expired' its lease ran out: readers see no thread, writers start a new generation
--             (gen, when the head still exists, is the generation to retire);
--   'lost'    its head or its registry entry is missing while the other exists, or the
--             shard's registry lost its marker member "" (the whole zset was lost): detail
--             names the missing key.
local function thread_state(sb, enct, now, reading, head)
  head = head or sb .. 't:' .. enct
  local h = redis.call('HMGET', head, 'g', 'exp')
  if h[1] and reading then
    -- A read's answer does not depend on the registry entry (an index for listings and sweeps):
    -- reads skip it; writes and the check see its loss. A thread without a lease ("0", or no field)
    -- costs no tonumber.
    local x = h[2]
    local e = x and x ~= '0' and tonumber(x) or 0
    if e > 0 then
      if type(now) == 'function' then now = now() end
      if e <= now then return h[1], 'expired' end
    end
    return h[1], 'live'
  end
  if type(now) == 'function' then now = now() end
  local reg = redis.call('ZSCORE', sb .. 'threads', enct)
  if not h[1] then
    if not reg then
      -- The registry holds the marker member "" from the prefix's creation on (no thread is ""): a
      -- registry without it was lost whole, with the entries of threads that may exist.
      if not redis.call('ZSCORE', sb .. 'threads', '') then return nil, 'lost', 'thread registry ' .. sb .. 'threads' end
      return nil, 'none'
    end
    local e = tonumber(reg)
    if e > 0 and e <= now then return nil, 'expired' end
    return nil, 'lost', 'thread head ' .. head
  end
  local e = tonumber(h[2]) or 0
  if e > 0 and e <= now then return h[1], 'expired' end
  if not reg then return h[1], 'lost', 'registry entry of ' .. head .. ' in ' .. sb .. 'threads' end
  return h[1], 'live'
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
-- Appends one event, its field/value pairs given as the arguments after feedmaxlen (at most a few hundred
-- items: the caller bounds them; a table's or an ARGV span's passed by unpack, no table built for them), to
-- a thread's stream and to its shard's feed, each trimmed to about its maximum length (maxlen, feedmaxlen:
-- decimal strings, as event_bounds returns them: a Lua number passed to redis.call is formatted by Redis
-- with "%.17g", at a cost). A maxlen of "0" (as event_bounds returns it for any maxlen <= 0) means
-- publishing is off. Events are appended by the script that made the write they announce. O(#fields).
local function publish(stream, feed, maxlen, feedmaxlen, ...)
  if maxlen == '0' then return end
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
  redis.call('XADD', feed, 'MAXLEN', '~', feedmaxlen, '*', ...)
end
-- Reads the bounds of an event from ARGV at position i: the stream's maxlen and
-- the feed's, as the decimal strings received (publish passes them
-- to XADD as they are), but the stream's as "0", publishing off, for any number
-- <= 0, so that callers test it as a string (tonumber costs a strtod, about 1,300
-- instructions). A maxlen that is not a number raises an error, before the
-- script writes. O(1).
local function event_bounds(i)
  local maxlen = ARGV[i]
  if maxlen ~= '0' and tonumber(maxlen) <= 0 then maxlen = '0' end
  return maxlen, ARGV[i + 1]
end
-- Reads an event spec from ARGV at position i: maxlen, feed maxlen, n, then n
-- field/value pairs. Returns maxlen and feedmaxlen (event_bounds), for publish,
-- the pairs and the position after the spec. O(n).
local function event_spec(i)
  local maxlen, feedmaxlen = event_bounds(i)
  local n = tonumber(ARGV[i + 2])
  local fields
  if n <= 1000 then
    fields = {unpack(ARGV, i + 3, i + 2 + 2 * n)} -- one table of the right size
  else
    fields = {}
    for j = i + 3, i + 2 + 2 * n do fields[#fields + 1] = ARGV[j] end
  end
  return maxlen, feedmaxlen, fields, i + 3 + 2 * n
end
-- prune.lua: one bounded step of PruneKeepLatest on one thread, which keeps in each namespace the newest
-- checkpoint with what it needs to be read back whole. The client runs, per namespace: "plan" until done,
-- "drop" until done, blob_gc.lua (mark, sweep), then "finish" once for the thread.
--   namespaces: one page of the thread's namespaces (SSCAN of its namespace set);
--   plan:       puts in the namespace's keep set (P:{N}:t:T:g:G:n:NS:pkeep) its newest checkpoint L and, for
--               each channel L has a version of but no value for (a delta channel), every ancestor from L's
--               parent up to the nearest one holding a value for it (so delta history still reaches its
--               seed); at most budget ancestors per step, continuing from the cursor with the channels
--               still open;
--   drop:       deletes, in id order from the cursor up to L, the checkpoints not in the keep set (a
--               checkpoint put after the plan has a greater id than L and stays); a step that finds L
--               deleted since the plan (a DeleteForRuns) deletes nothing and ends the drop: L, which it
--               never deletes, is what keeps the namespace from being emptied;
--   finish:     removes the keep sets of the namespaces given and announces the pruning.
-- A keep set holds the member \0 job token of the job that planned it (ARGV[9]). A plan or drop step whose
-- keep set no longer holds it (another prune of the namespace started its plan anew, dropping what this
-- one kept, or the set was lost) ends this job's work on the namespace and deletes nothing: dropping with
-- the other job's partial keep set would delete checkpoints one of them keeps (its newest, or the ancestors
-- a delta channel needs). The other job prunes. finish removes only the keep sets that hold its token.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] event stream of the thread
-- KEYS[4] event feed of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] the generation the first step read ("" on the first step)
-- ARGV[4] phase: "namespaces", "plan", "drop" or "finish"
-- ARGV[5] namespaces: the SSCAN cursor ("0" to start); plan and drop: the encoded namespace;
--         finish: the number of checkpoints deleted, for the event
-- ARGV[6] plan: the ancestor to continue from ("" to start); drop: the last id examined ("" to start)
-- ARGV[7] budget: namespaces, ancestors or index entries per step
-- ARGV[8] plan: the newest checkpoint L ("" on the first step); drop: L
-- ARGV[9] plan, drop and finish: the job's token: 1 to 16 characters of [a-z2-7] (keys.NewGen), one per job
-- ARGV[10 ..] plan: the channels still open; finish: event spec (stream maxlen, feed maxlen, e, e pairs),
--         then the encoded namespaces whose keep sets go
-- Returns: {generation, then by phase: namespaces: next SSCAN cursor ("0" at the end), namespace, ...;
--          plan: next cursor ("" when done), L ("" when the namespace is empty, or the keep set is not this
--          job's), channels still open...; drop: next cursor ("" when done), checkpoints deleted; finish:
--          nothing}. {""} when the thread is gone, expired or was replaced since
--          the first step. "DATALOSS <what>" for a lost head, namespace index or checkpoint hash.
-- Work bound: at most ARGV[7] namespaces, ancestors (each O(its fields)) or index entries (each O(log n)).
local sb, enct, phase = ARGV[1], ARGV[2], ARGV[4]
may_run_full(sb) -- it frees memory: it runs on a full Redis (lib.lua)
local budget = tonumber(ARGV[7])
local now = now_ms()
local gen, state, detail = thread_state(sb, enct, now)
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' or (ARGV[3] ~= '' and ARGV[3] ~= gen) then
  -- The job ends: a keep set it planned in a namespace goes with it.
  if ARGV[3] ~= '' and (phase == 'plan' or phase == 'drop') then
    local pkeep = sb .. 't:' .. enct .. ':g:' .. ARGV[3] .. ':n:' .. ARGV[5] .. ':pkeep'
    if redis.call('SISMEMBER', pkeep, '\0' .. ARGV[9]) == 1 then redis.call('UNLINK', pkeep) end
  end
  return {''}
end
local gb = sb .. 't:' .. enct .. ':g:' .. gen

if phase == 'namespaces' then
  local r = redis.call('SSCAN', gb .. ':ns', ARGV[5], 'COUNT', budget)
  local out = {gen, r[1]}
  for _, encns in ipairs(r[2]) do out[#out + 1] = encns end
  return out
end

local owner = '\0' .. ARGV[9] -- no checkpoint id holds the byte 0
if phase == 'finish' then
  local maxlen, feedmaxlen, event, at = event_spec(10)
  for i = at, #ARGV do
    local pkeep = gb .. ':n:' .. ARGV[i] .. ':pkeep'
    if redis.call('SISMEMBER', pkeep, owner) == 1 then redis.call('UNLINK', pkeep) end
  end
  if tonumber(ARGV[5]) > 0 and maxlen ~= '0' then
    event[#event + 1] = 'n'
    event[#event + 1] = ARGV[5]
    publish(KEYS[3], KEYS[4], maxlen, feedmaxlen, unpack(event))
  end
  return {gen}
end

local encns = ARGV[5]
local nb = gb .. ':n:' .. encns
local pkeep = nb .. ':pkeep'

if phase == 'drop' then
  if redis.call('SISMEMBER', pkeep, owner) == 0 then return {gen, '', 0} end
  local latest = ARGV[8]
  -- L deleted since the plan (a DeleteForRuns): what is left below it may hold the namespace's newest now,
  -- and dropping it could empty the namespace, which the namespace set still names. Nothing is dropped.
  if not redis.call('ZSCORE', nb .. ':idx', latest) then return {gen, '', 0} end
  local min = '-'
  if ARGV[6] ~= '' then min = '(' .. ARGV[6] end
  local ids = redis.call('ZRANGEBYLEX', nb .. ':idx', min, '[' .. latest, 'LIMIT', 0, budget)
  local deleted = 0
  for _, id in ipairs(ids) do
    if redis.call('SISMEMBER', pkeep, id) == 0 then deleted = deleted + drop_checkpoint(sb, enct, encns, gen, id) end
  end
  local nextc = ''
  if #ids == budget then nextc = ids[#ids] end
  return {gen, nextc, deleted}
end

-- plan
local blobs = nb .. ':blobs'
local latest, cur = ARGV[8], nil
local open, nopen = {}, 0
if ARGV[6] == '' then
  local top = redis.call('ZREVRANGE', nb .. ':idx', '0', '0')
  if #top == 0 then return {gen, '', ''} end
  latest = top[1]
  local flat = redis.call('HGETALL', nb .. ':cp:' .. latest)
  if #flat == 0 then return dataloss('checkpoint hash ' .. nb .. ':cp:' .. latest) end
  for i = 1, #flat, 2 do
    local f = flat[i]
    if string.sub(f, 1, 2) == 'c:' then
      local ch = string.sub(f, 3)
      -- The value's size only (a value never enters Lua): 0 is the empty marker, or no field at all.
      local bf = blob_field(ch, flat[i + 1])
      if redis.call('HSTRLEN', blobs, bf) == 0 then
        if redis.call('HEXISTS', blobs, bf) == 0 then return dataloss('value ' .. bf .. ' in ' .. blobs) end
        open[ch] = true
        nopen = nopen + 1
      end
    elseif f == 'p' then
      cur = flat[i + 1]
    end
  end
  -- The plan is this job's from here (checked first: a lost hash or value leaves no plan behind).
  redis.call('UNLINK', pkeep)
  redis.call('SADD', pkeep, owner, latest)
else
  if redis.call('SISMEMBER', pkeep, owner) == 0 then return {gen, '', ''} end
  cur = ARGV[6]
  for i = 10, #ARGV do
    open[ARGV[i]] = true
    nopen = nopen + 1
  end
end
local steps = 0
while cur and nopen > 0 and steps < budget do
  steps = steps + 1
  if redis.call('SISMEMBER', pkeep, cur) == 1 then -- a cycle (an ID put again after its deletion): walked once
    cur = nil
    break
  end
  local cpkey = nb .. ':cp:' .. cur
  -- The fields the walk needs only (not the pending writes, nor any value): v (every checkpoint has it),
  -- the parent, and the versions of the channels still open.
  local names, chs = {'v', 'p'}, {}
  for ch in pairs(open) do
    chs[#chs + 1] = ch
    names[#names + 1] = 'c:' .. ch
  end
  local pf = redis.call('HMGET', cpkey, unpack(names))
  if not pf[1] then
    if redis.call('ZSCORE', nb .. ':idx', cur) then return dataloss('checkpoint hash ' .. cpkey) end
    cur = nil
    break
  end
  redis.call('SADD', pkeep, cur)
  for j, ch in ipairs(chs) do
    local ver = pf[j + 2]
    if ver and redis.call('HSTRLEN', blobs, blob_field(ch, ver)) > 0 then -- holds a value: the channel's seed
      open[ch] = nil
      nopen = nopen - 1
    end
  end
  cur = pf[2] or nil
end
local out = {gen, '', latest}
if cur and nopen > 0 then
  out[2] = cur
  for ch in pairs(open) do out[#out + 1] = ch end
end
return out
