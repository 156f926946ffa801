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
