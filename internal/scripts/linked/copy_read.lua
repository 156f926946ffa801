-- copy_read.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
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
-- Checks what every live generation has: its namespace set, and the index of a
-- namespace the set names (encns may be nil: the set only). Returns an error reply
-- (DATALOSS) or nil. O(1).
local function check_gen(gb, encns)
  if not encns then
    if redis.call('EXISTS', gb .. ':ns') == 0 then return dataloss('namespace set ' .. gb .. ':ns') end
    return nil
  end
  local idx = gb .. ':n:' .. encns .. ':idx'
  if redis.call('EXISTS', gb .. ':ns', idx) == 2 then return nil end -- the usual case, one call
  if redis.call('EXISTS', gb .. ':ns') == 0 then return dataloss('namespace set ' .. gb .. ':ns') end
  if redis.call('SISMEMBER', gb .. ':ns', encns) == 1 then return dataloss('namespace index ' .. idx) end
  return nil
end
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
