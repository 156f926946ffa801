-- delete_runs.lua: deletes the checkpoints of some runs in one shard, with their writes, index entries and orphaned values.
-- KEYS[1] index zset of every checkpoint of the shard
-- KEYS[2 ..] run index sets of the runs (members: id \0 thread \0 namespace \0 generation)
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] stream maxlen (0: no events), ARGV[3] feed maxlen
-- ARGV[4] the run ids, for the events: len ":" run id, repeated
-- Returns: the number of checkpoints deleted. Each thread that lost checkpoints gets an event
-- {t runs_deleted, th thread, runs ARGV[4], n count} in its stream and the shard's feed.
-- A run index entry is acted on only if its generation is its thread's current one and the checkpoint still
-- names that run index (field "r"): a checkpoint re-put under another run is left alone; entries of retired
-- generations are left to the reclaim. Values no remaining checkpoint of the namespace points to are removed.
-- Work bound: O(checkpoints of the runs and of the namespaces they touch) -- NOT yet bounded.
local sb = ARGV[1]
local deleted = 0
local maxlen, feedmaxlen = tonumber(ARGV[2]), tonumber(ARGV[3])
local now = now_ms()
local touched = {} -- "thread \0 namespace" -> {thread, namespace, generation}
local perthread = {} -- thread -> checkpoints deleted
for k = 2, #KEYS do
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[k])) do
    local parts = split0(member)
    local id, enct, encns, g = parts[1], parts[2], parts[3], parts[4]
    local gen, state = thread_state(sb, enct, now)
    if state == 'live' and gen == g then
      local cp = sb .. 't:' .. enct .. ':g:' .. gen .. ':n:' .. encns .. ':cp:' .. id
      if redis.call('HGET', cp, 'r') == KEYS[k] then
        local d = drop_checkpoint(sb, enct, encns, gen, id)
        deleted = deleted + d
        perthread[enct] = (perthread[enct] or 0) + d
        touched[enct .. '\0' .. encns] = {enct, encns, gen}
      end
    end
  end
  redis.call('DEL', KEYS[k])
end
for _, t in pairs(touched) do
  local nb = sb .. 't:' .. t[1] .. ':g:' .. t[3] .. ':n:' .. t[2]
  local refs = {}
  for _, id in ipairs(redis.call('ZRANGE', nb .. ':idx', 0, -1)) do
    local flat = redis.call('HGETALL', nb .. ':cp:' .. id)
    for i = 1, #flat, 2 do
      if string.sub(flat[i], 1, 2) == 'c:' then refs[blob_field(string.sub(flat[i], 3), flat[i + 1])] = true end
    end
  end
  local drop = {}
  for _, f in ipairs(redis.call('HKEYS', nb .. ':blobs')) do
    if not refs[f] then drop[#drop + 1] = f end
  end
  if #drop > 0 then chunked('HDEL', nb .. ':blobs', drop, 1000) end
  -- A namespace left without checkpoints goes, and so does a thread left without namespaces.
  if redis.call('EXISTS', nb .. ':idx') == 0 then
    local gb = sb .. 't:' .. t[1] .. ':g:' .. t[3]
    redis.call('UNLINK', nb .. ':blobs')
    redis.call('SREM', gb .. ':ns', t[2])
    if redis.call('EXISTS', gb .. ':ns') == 0 and redis.call('HGET', sb .. 't:' .. t[1], 'g') == t[3] then
      retire(sb, t[1], t[3], now)
      reclaim_gen(sb, t[1] .. '\0' .. t[3], 4)
    end
  end
end
if maxlen > 0 then
  for enct, n in pairs(perthread) do
    if n > 0 then
      publish(sb .. 't:' .. enct .. ':events', sb .. 'feed', maxlen, feedmaxlen,
        {'t', 'runs_deleted', 'th', enct, 'runs', ARGV[4], 'n', tostring(n)})
    end
  end
end
return deleted
