-- copy_write.lua: one bounded step of CopyThread on the target side. The copy is written into a staging
-- generation that no reader sees (it is not the target's head generation), and becomes the target's thread
-- at once at "commit". A staging generation is queued for reclaim from a deadline that every step moves
-- on, so an abandoned copy is reclaimed by the sweeps.
-- KEYS[1] thread head hash of the target
-- KEYS[2] thread registry zset of the target's shard
-- KEYS[3] index zset of every checkpoint of the target's shard
-- KEYS[4] reclaim queue zset of the target's shard
-- KEYS[5] event stream of the target thread
-- KEYS[6] event feed of the target's shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded target thread
-- ARGV[3] the staging generation
-- ARGV[4] phase: "begin", "cps", "blobs", "check", "commit" or "abort". A namespace's "cps" pages come
--         before its "blobs" pages, then one "check": the staging namespace's need set holds the blob fields
--         the copied checkpoints point to that no "blobs" page wrote yet, and "check" refuses a namespace
--         whose copied checkpoints lack values (the source's were reclaimed during the copy: a Prune or
--         DeleteForRuns deleted checkpoints the copy had taken, or a re-put replaced them).
-- ARGV[5] how long an idle staging generation waits before it is reclaimed, in milliseconds
-- ARGV[6] cps, blobs and check: encoded namespace; commit: TTL in milliseconds (0: none)
-- ARGV[7 ..] cps: records id, n, then n checkpoint field/value pairs (a "r" field names the run index in
--            the target's shard); blobs: field/value pairs; commit: the number of checkpoints copied,
--            then the event spec (stream maxlen, feed maxlen, e, then e event field/value pairs)
-- Returns: 1. Errors, before anything is written: "EXISTS ..." (begin, commit) when the target thread
--          has checkpoints; "DATALOSS ..." when its head or registry entry is missing, or (cps) the
--          shard's index of every checkpoint is gone while the shard's registry lists a thread; "MISSING
--          ..." (check) when a copied checkpoint's value was not copied; "NOTFOUND ..." (every phase but
--          begin) when the staging generation left the reclaim queue or is due in it (a copy idle for
--          longer than ARGV[5]); "BADARGS ..." (a client bug) for a "cps" page of no checkpoints, values of
--          a namespace no "cps" page wrote, or a commit of a copy that copied no checkpoint (the client
--          aborts it instead).
-- Work bound: O(size of the page given).
local sb, enct, gen, phase = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = now_ms()
local entry = enct .. '\0' .. gen
local grace = tonumber(ARGV[5])
if phase == 'abort' then
  redis.call('ZADD', KEYS[4], now, entry)
  return 1
end
-- Every phase but begin: still a staging generation the queue knows, and not yet due (a reclaim may have
-- begun on a due one).
if phase ~= 'begin' then
  local due = redis.call('ZSCORE', KEYS[4], entry)
  if not due or tonumber(due) <= now then return redis.error_reply('NOTFOUND staging generation was reclaimed') end
end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
if phase == 'begin' or phase == 'commit' then
  -- A copy that copied no checkpoint commits nothing: the target would be a thread without namespaces.
  if phase == 'commit' and redis.call('EXISTS', gb .. ':ns') == 0 then
    return redis.error_reply('BADARGS commit of a copy without checkpoints')
  end
  local old, state, detail = thread_state(sb, enct, now)
  if state == 'lost' then return dataloss(detail) end
  if state == 'live' then
    if phase == 'commit' then redis.call('ZADD', KEYS[4], now, entry) end
    return redis.error_reply('EXISTS target thread already has checkpoints')
  end
  if phase == 'begin' then
    redis.call('ZADD', KEYS[4], now + grace, entry)
    return 1
  end
  if state == 'expired' then retire(sb, enct, old, now) end
  redis.call('HSET', KEYS[1], 'g', gen)
  touch(sb, enct, tonumber(ARGV[6]), now)
  redis.call('ZREM', KEYS[4], entry)
  local maxlen, feedmaxlen, event = event_spec(8)
  if maxlen ~= '0' then
    event[#event + 1] = 'n'
    event[#event + 1] = ARGV[7]
    publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, unpack(event))
    local ttl = tonumber(ARGV[6])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[5], ttl) else redis.call('PERSIST', KEYS[5]) end
  end
  return 1
end
local encns = ARGV[6]
local nb = gb .. ':n:' .. encns
local need = nb .. ':need'
if phase == 'cps' then
  -- A page names its namespace in the namespace set, and writes its index: at least one checkpoint.
  if #ARGV < 8 then return redis.error_reply('BADARGS a page of no checkpoints') end
  -- A shard index lost while the shard has threads would be rebuilt short by this page.
  local lost = check_shard_index(sb, enct)
  if lost then return lost end
elseif phase == 'blobs' and redis.call('EXISTS', nb .. ':idx') == 0 then
  -- Values only for a namespace whose checkpoints were copied: the namespace set names only those.
  return redis.error_reply('BADARGS values of a namespace without copied checkpoints')
end
redis.call('ZADD', KEYS[4], now + grace, entry)
if phase == 'check' then
  local f = redis.call('SRANDMEMBER', need)
  if f then return redis.error_reply('MISSING value ' .. f .. ' of a copied checkpoint in ' .. nb) end
  return 1
end
if phase == 'blobs' then
  local fv, fields = {}, {}
  for i = 7, #ARGV do fv[#fv + 1] = ARGV[i] end
  for i = 1, #fv, 2 do fields[#fields + 1] = fv[i] end
  if #fv > 0 then
    chunked('HSET', nb .. ':blobs', fv, 1000)
    chunked('SREM', need, fields, 1000)
  end
  return 1
end
redis.call('SADD', gb .. ':ns', encns)
local i = 7
while i <= #ARGV do
  local id, n = ARGV[i], tonumber(ARGV[i + 1])
  local fv = {}
  for j = i + 2, i + 1 + 2 * n do fv[#fv + 1] = ARGV[j] end
  i = i + 2 + 2 * n
  local cp = nb .. ':cp:' .. id
  local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
  redis.call('DEL', cp)
  chunked('HSET', cp, fv, 1000)
  redis.call('ZADD', nb .. ':idx', '0', id)
  redis.call('ZADD', gb .. ':idx', '0', id .. '\0' .. encns)
  redis.call('ZADD', KEYS[3], '0', member)
  local run = redis.call('HGET', cp, 'r')
  if run then redis.call('SADD', run, member) end
  local fields = {}
  for j = 1, #fv, 2 do
    local f = fv[j]
    if string.sub(f, 1, 2) == 'c:' then fields[#fields + 1] = blob_field(string.sub(f, 3), fv[j + 1]) end
  end
  if #fields > 0 then chunked('SADD', need, fields, 1000) end
end
return 1
