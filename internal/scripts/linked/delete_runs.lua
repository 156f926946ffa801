-- delete_runs.lua (with the lib.lua helpers it uses)
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
-- delete_runs.lua: one bounded step of deleting the checkpoints of one run in one shard, with their writes and
-- index entries; the client repeats it from the cursor it returns until that is "0", then removes the values no
-- remaining checkpoint points to with blob_gc.lua on every namespace it returns.
-- KEYS[1] run index set (members: id \0 thread \0 namespace \0 generation)
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] budget: run index members to act on at most (SSCAN's COUNT)
-- ARGV[3] stream maxlen (0 or less: no events), ARGV[4] feed maxlen
-- ARGV[5] the run ids of the call, for the events: len ":" run id, repeated
-- ARGV[6] the SSCAN cursor of the run index ("0" to start)
-- ARGV[7] how long (ms) the event stream of a thread this step empties stays, as after DeleteThread
-- ARGV[8] e, then e more event field/value pairs: the trace context of the deleting span (traceparent, and
--         tracestate when it has one; e is 0, or ARGV[8] absent, without a span context)
-- Returns: {next cursor ("0" when the scan is over), then triples encoded thread, generation, encoded namespace
--          of the namespaces that lost checkpoints and still hold some}. Each thread that lost checkpoints gets
--          an event {t runs_deleted, th thread, runs ARGV[5], n count, the trace context of ARGV[8]} in its stream and the shard's feed.
-- A member is acted on only if its generation is its thread's current one and the checkpoint still names
-- this run index (field "r"): a checkpoint re-put under another run is left alone. A member whose checkpoint
-- is gone or names no longer this run leaves the run index. One of another generation whose checkpoint names
-- this run stays: a retired generation's checkpoints leave it when their reclaim deletes them, and a copy's
-- staging generation becomes its target's at the commit (removed now, the copied checkpoint would be in no
-- run index: a later call would not find it). A namespace left without checkpoints goes, and so does a thread
-- left without namespaces (its event stream then expires after ARGV[7] ms). Checkpoints put to the run while the scan runs may or may not be deleted.
-- Errors, before anything is written: "DATALOSS <what>" when a thread a member names has a head without its
-- registry entry (or the reverse), or a live thread whose checkpoint the step would delete lacks its
-- namespace set or that namespace's index.
-- Work bound: one SSCAN of COUNT ARGV[2] (about that many members), each O(log n).
local sb, budget = ARGV[1], tonumber(ARGV[2])
may_run_full(sb) -- it frees memory: it runs on a full Redis (lib.lua)
local maxlen, feedmaxlen = event_bounds(3) -- read before the first write
local ntrace = tonumber(ARGV[8] or '0')
if not ntrace or ntrace < 0 or ntrace > 2 or (ntrace > 0 and #ARGV < 8 + 2 * ntrace) then return redis.error_reply('BADARGS trace context ' .. tostring(ARGV[8])) end
local retain = tonumber(ARGV[7])
if not retain or retain < 1 then return redis.error_reply('BADARGS retention ' .. tostring(ARGV[7])) end
local now = now_ms()
local touched, order = {}, {} -- "thread \0 generation \0 namespace" -> {thread, generation, namespace}
local perthread = {} -- thread -> checkpoints deleted
local retired = {} -- threads this step emptied
local current = {}
local scan = redis.call('SSCAN', KEYS[1], ARGV[6], 'COUNT', budget)
-- Every check first, then every write: Redis does not roll a script back. A thread whose head or registry
-- entry is lost, or whose namespace set or touched namespace index is, refuses the step: deleting in it would
-- empty what only looks empty (the thread would be retired with its other namespaces, a namespace's values
-- unlinked under checkpoints its lost index no longer names).
local drops, strays = {}, {}
for _, member in ipairs(scan[2]) do
  local parts = split0(member)
  local id, enct, encns, g = parts[1], parts[2], parts[3], parts[4]
  local cur = current[enct]
  if cur == nil then
    local gen, state, detail = thread_state(sb, enct, now)
    if state == 'lost' then return dataloss(detail) end
    cur = false
    if state == 'live' then cur = gen end
    current[enct] = cur
  end
  local ours = g and encns and redis.call('HGET', sb .. 't:' .. enct .. ':g:' .. g .. ':n:' .. encns .. ':cp:' .. id, 'r') == KEYS[1]
  if ours and cur == g then
    local key = enct .. '\0' .. g .. '\0' .. encns
    if not touched[key] then
      local lost = check_gen(sb .. 't:' .. enct .. ':g:' .. g, encns)
      if lost then return lost end
      touched[key] = {enct, g, encns}
      order[#order + 1] = key
    end
    drops[#drops + 1] = parts
  elseif not ours then
    strays[#strays + 1] = member
  end
end
for _, member in ipairs(strays) do redis.call('SREM', KEYS[1], member) end
for _, parts in ipairs(drops) do
  drop_checkpoint(sb, parts[2], parts[3], parts[4], parts[1])
  perthread[parts[2]] = (perthread[parts[2]] or 0) + 1
end
local out = {scan[1]}
for _, key in ipairs(order) do
  local t = touched[key]
  local gb = sb .. 't:' .. t[1] .. ':g:' .. t[2]
  local nb = gb .. ':n:' .. t[3]
  if redis.call('EXISTS', nb .. ':idx') == 0 then
    redis.call('UNLINK', nb .. ':blobs', nb .. ':keep', nb .. ':pkeep', nb .. ':need')
    redis.call('SREM', gb .. ':ns', t[3])
    if redis.call('EXISTS', gb .. ':ns') == 0 then
      retire(sb, t[1], t[2], now)
      reclaim_gen(sb, t[1] .. '\0' .. t[2], 4)
      retired[#retired + 1] = t[1]
    end
  else
    out[#out + 1] = t[1]
    out[#out + 1] = t[2]
    out[#out + 1] = t[3]
  end
end
if maxlen ~= '0' then
  for enct, n in pairs(perthread) do
    publish(sb .. 't:' .. enct .. ':events', sb .. 'feed', maxlen, feedmaxlen,
      't', 'runs_deleted', 'th', enct, 'runs', ARGV[5], 'n', tostring(n), unpack(ARGV, 9, 8 + 2 * ntrace))
  end
end
-- An emptied thread's stream outlives it by ARGV[7] ms, as a deleted thread's does; nothing else owns it.
for _, enct in ipairs(retired) do redis.call('PEXPIRE', sb .. 't:' .. enct .. ':events', retain) end
return out
