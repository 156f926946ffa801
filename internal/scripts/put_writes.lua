-- put_writes.lua: stores the pending writes of one task against one checkpoint, renews the thread's lease,
-- and announces them, atomically.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] event stream of the thread
-- KEYS[4] event feed of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id
-- ARGV[5] TTL in milliseconds, 0 to keep forever
-- ARGV[6] the largest write value to copy into the event, in bytes; -1 for none
-- ARGV[7] the most values to copy into the event
-- ARGV[8] the most bytes of values to copy into the event, all values together (values past either
--         bound are left out of the event; its "ch" field still names every channel written)
-- ARGV[9] call token: a re-sent call (same token as the checkpoint's field "ow") changes nothing
-- ARGV[10] stream maxlen (0 or less: no event), ARGV[11] feed maxlen
-- ARGV[12] task ID (the event's "task")
-- ARGV[13] e, then e more event field/value pairs: the trace context of the writing span (traceparent, and
--          tracestate when it has one; e is 0 without a span context)
-- ARGV[14 + 2e ..] quadruples: field, value, mode, channel; the value is the write's pack(channel, task path, stored
--            value), so it starts with len(channel) ":" channel; mode "o" overwrites (special channels),
--            "n" inserts only if the field is absent (regular writes: idempotent)
-- Returns: the number of writes stored. Writes to a checkpoint that is not stored (its thread may not exist
-- yet) are kept under its early key until its Put takes them (or for 10 minutes). Errors, raised before
-- anything is written: "DATALOSS ..." when the thread's head (while its
-- registry entry exists), or an indexed checkpoint's hash, is missing; "BADARGS ..." when the arguments
-- after the trace context are not whole quadruples (a client bug).
-- The event (docs/storage-format.md, "Events"; built here, its fields are constants of the script): t "writes",
-- th, ns, id and task, the channels of the writes stored (field "ch": len ":" channel, repeated), the trace
-- context pairs of ARGV[13] and, within the value bounds, their stored values ("v:" position); no write
-- stored, no event.
-- Work bound: O(number of writes).
local sb, enct, encns, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl = 0 -- tonumber costs a strtod (about 1,300 instructions): no TTL, "0", needs none
if ARGV[5] ~= '0' then ttl = tonumber(ARGV[5]) end
local bound, maxvalues, maxbytes = -1, 0, 0
if ARGV[6] ~= '-1' then bound, maxvalues, maxbytes = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]) end
-- The clock is read only when needed: with a TTL to renew, once here; else only if the thread has a
-- lease to check (thread_state calls now_ms then). A write judges the thread from its head, as reads
-- do: the registry entry is an index that the check reports.
local now = ttl > 0 and now_ms() or now_ms -- a number, or the function (only the lease check calls it)
local gen, state, detail = thread_state(sb, enct, now, true, KEYS[1])
if state == 'lost' then return dataloss(detail) end
-- Writes to a checkpoint not stored yet (LangGraph's runtime sends a step's writes while the Put of its
-- checkpoint is under way) go to the early key of that checkpoint id, which the Put takes over
-- (docs/storage-format.md, "Pending writes before their checkpoint").
local early = state ~= 'live'
local cp
if not early then cp = sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns .. ':cp:' .. id end
local maxlen, feedmaxlen = event_bounds(10)
local ntrace = tonumber(ARGV[13])
if not ntrace or ntrace < 0 or ntrace > 2 then return redis.error_reply('BADARGS put_writes trace context count ' .. tostring(ARGV[13])) end
local at = 14 + 2 * ntrace
-- The event's trace context pairs, then its values ("v:" position, value), when it carries any.
local vals, nv = {}, 0
if ntrace > 0 then vals, nv = {unpack(ARGV, 14, at - 1)}, 2 * ntrace end
-- One HMGET reads the checkpoint's v and ow and whether the fields of the first 998 writes exist (those of
-- any later ones in chunks of 1,000); then one HSET stores the writes and the call token.
local nw = (#ARGV - at + 1) / 4
if nw % 1 ~= 0 then return redis.error_reply('BADARGS put_writes arguments after the trace context are not quadruples') end
local first = nw < 998 and nw or 998
local q = {'v', 'ow', unpack(ARGV, at, at + first - 1)} -- sized once; its items are set below
for w = 0, first - 1 do q[w + 3] = ARGV[at + 4 * w] end
local have
if not early then
  have = redis.call('HMGET', cp, unpack(q))
  if not have[1] then
    if redis.call('ZSCORE', sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns .. ':idx', id) then
      return dataloss('checkpoint hash ' .. cp)
    end
    early = true
  end
end
if early then
  cp = early_key(sb, enct, encns, id)
  have = redis.call('HMGET', cp, unpack(q)) -- no "v" there: the other fields tell
end

if have[2] == ARGV[9] then return 0 end
if nw > first then
  local rest = {}
  for w = first, nw - 1 do rest[w - first + 1] = ARGV[at + 4 * w] end
  rest = chunked('HMGET', cp, rest, 1000)
  for w = first, nw - 1 do have[w + 3] = rest[w - first + 1] end
end
-- The event's "ch" field lists the channels of the writes stored: a write's value starts with
-- len(channel) ":" channel (its pack), taken from there rather than built anew.
local set, chs
if nw == first then -- sized once (their surplus items are never read): unpack copies references
  set, chs = {'ow', ARGV[9], unpack(ARGV, at, at + 2 * nw - 1)}, {unpack(ARGV, at, at + nw - 1)}
else
  set, chs = {'ow', ARGV[9]}, {}
end
local nset, taken, nch = 2, {}, 0
local written, copied = 0, 0
for w = 0, nw - 1 do
  local i = at + 4 * w
  local f = ARGV[i]
  if ARGV[i + 2] == 'o' or not (have[w + 3] or taken[f]) then
    taken[f] = true
    local v = ARGV[i + 1]
    set[nset + 1], set[nset + 2] = f, v
    nset = nset + 2
    written = written + 1
    local l = #ARGV[i + 3]
    nch = nch + 1
    chs[nch] = string.sub(v, 1, l + (l < 10 and 2 or l < 100 and 3 or #decimal(l) + 1))
    local size = #v
    if bound >= 0 and copied < maxvalues and size <= bound and size <= maxbytes then
      copied = copied + 1
      maxbytes = maxbytes - size
      vals[nv + 1], vals[nv + 2] = 'v:' .. decimal(w), v
      nv = nv + 2
    end
  end
end
chunked('HSET', cp, set, 1000, nset)
if early then
  -- Owned by the shard's registry of early writes until the Put takes them, or reclaimed from the time
  -- it gives (10 minutes on): the checkpoint never came.
  redis.call('ZADD', sb .. 'early', string.format('%d', now_ms() + 600000), early_member(enct, encns, id))
elseif ttl > 0 then
  touch(sb, enct, ttl, now)
end
if written > 0 and maxlen ~= '0' then
  -- The event's fields go to publish as arguments: no table of them to build and unpack.
  publish(KEYS[3], KEYS[4], maxlen, feedmaxlen, 't', 'writes', 'th', enct, 'ns', encns, 'id', id, 'task', ARGV[12],
    'ch', table.concat(chs, '', 1, nch), unpack(vals, 1, nv))
  if early and state ~= 'live' then
    -- The stream of a thread that does not exist yet lives as long as the early writes, unless it has a
    -- TTL already (a deleted thread's); the Put that creates the thread makes it the thread's.
    if redis.call('PTTL', KEYS[3]) == -1 then redis.call('PEXPIRE', KEYS[3], 600000) end
  elseif ttl > 0 then
    redis.call('PEXPIRE', KEYS[3], ARGV[5])
  end
end
return written
