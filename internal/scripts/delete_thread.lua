-- delete_thread.lua: makes a thread invisible at once (its generation retired, its head and registry entry
-- removed), announces it, and reclaims the first part of its keys; sweep.lua reclaims the rest.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] reclaim queue zset of the shard
-- KEYS[4] event stream of the thread
-- KEYS[5] event feed of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] how long the thread's event stream stays after the deletion, in milliseconds
-- ARGV[4] reclaim budget: units of work (checkpoints dropped) this call may spend
-- ARGV[5 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- Returns: {checkpoints the thread held (0 for an unknown or expired thread, which is announced by no
--          event; an unknown thread's stream without a TTL gets ARGV[3]), the reclaim queue entry of the retired generation ("" when none), 1 when that
--          generation is fully reclaimed, else 0}.
--          "DATALOSS <what>" when the thread's head is missing while its registry entry remains: the
--          registry entry is removed, but the keys of its generation cannot be found.
-- The event gets the field "n", the number of checkpoints deleted.
-- Work bound: O(log n) to retire, plus at most ARGV[4] units of reclaim.
local sb, enct, budget = ARGV[1], ARGV[2], tonumber(ARGV[4])
may_run_full(sb) -- it frees memory: it runs on a full Redis (lib.lua)
local maxlen, feedmaxlen, event = event_spec(5)
local now = now_ms()
local gen, state, detail = thread_state(sb, enct, now)
if state == 'none' then
  -- An unknown thread's stream (one emptied by an earlier version, or by hand) gets the deleted thread's TTL
  -- unless it has one: it would outlive every owner.
  if redis.call('PTTL', KEYS[4]) == -1 then redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[3])) end
  return {0, '', 1}
end
if state == 'lost' and not gen then
  retire(sb, enct, nil, now)
  return dataloss(detail)
end
local count = redis.call('ZCARD', sb .. 't:' .. enct .. ':g:' .. gen .. ':idx')
local entry = enct .. '\0' .. gen
retire(sb, enct, gen, now)
if state ~= 'expired' and count > 0 and maxlen ~= '0' then
  event[#event + 1] = 'n'
  event[#event + 1] = tostring(count)
  publish(KEYS[4], KEYS[5], maxlen, feedmaxlen, unpack(event))
  redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[3]))
end
local _, done = reclaim_gen(sb, entry, budget)
if state == 'expired' then count = 0 end
if done then return {count, entry, 1} end
return {count, entry, 0}
