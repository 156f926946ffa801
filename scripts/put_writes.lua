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
-- ARGV[10 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- then quadruples: field, value, mode, channel; mode "o" overwrites (special channels),
--            "n" inserts only if the field is absent (regular writes: idempotent)
-- Returns: the number of writes stored. Errors, raised before anything is written: "NOTFOUND ..." when the
-- thread or checkpoint does not exist (or expired); "DATALOSS ..." when the thread's head (while its
-- registry entry exists), or an indexed checkpoint's hash, is missing.
-- The event lists the channels of the writes stored (field "ch": len ":" channel, repeated) and, within the
-- value bounds, their stored values ("v:" position); no write stored, no event.
-- Work bound: O(number of writes).
local sb, enct, encns, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl, bound, maxvalues, maxbytes = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
-- The clock is read only when needed (a lease to check or renew). A write judges the thread from its
-- head, as reads do: the registry entry is an index that the check reports.
local now = lazy_clock()
local gen, state, detail = thread_state(sb, enct, now, true)
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' then return redis.error_reply('NOTFOUND thread does not exist') end
local nb = sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns
local cp = nb .. ':cp:' .. id
local head = redis.call('HMGET', cp, 'v', 'ow')
if not head[1] then
  if redis.call('ZSCORE', nb .. ':idx', id) then return dataloss('checkpoint hash ' .. cp) end
  return redis.error_reply('NOTFOUND checkpoint does not exist')
end

if head[2] == ARGV[9] then return 0 end
local maxlen, feedmaxlen, event, at = event_spec(10)
-- Which fields exist already, in one call; then one HSET of the writes stored and the call token.
local names = {}
for i = at, #ARGV, 4 do names[#names + 1] = ARGV[i] end
local have = {}
if #names > 0 then have = chunked('HMGET', cp, names, 1000) end
local set, taken = {}, {}
local written, channels, copied = 0, {}, 0
for i = at, #ARGV, 4 do
  local f = ARGV[i]
  local ok = ARGV[i + 2] == 'o' or not (have[(i - at) / 4 + 1] or taken[f])
  if ok then
    taken[f] = true
    set[#set + 1] = f
    set[#set + 1] = ARGV[i + 1]
    written = written + 1
    channels[#channels + 1] = decimal(string.len(ARGV[i + 3])) .. ':' .. ARGV[i + 3]
    local size = string.len(ARGV[i + 1])
    if bound >= 0 and copied < maxvalues and size <= bound and size <= maxbytes then
      copied = copied + 1
      maxbytes = maxbytes - size
      event[#event + 1] = 'v:' .. decimal((i - at) / 4)
      event[#event + 1] = ARGV[i + 1]
    end
  end
end
set[#set + 1] = 'ow'
set[#set + 1] = ARGV[9]
chunked('HSET', cp, set, 1000)
if ttl > 0 then touch(sb, enct, ttl, now()) end
if written > 0 and tonumber(maxlen) > 0 then
  event[#event + 1] = 'ch'
  event[#event + 1] = table.concat(channels)
  publish(KEYS[3], KEYS[4], maxlen, feedmaxlen, event)
  if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
end
return written
