-- delete_runs.lua: deletes the checkpoints of some runs in one shard, with their writes, index entries and orphaned values.
-- KEYS[1] index zset of every checkpoint of the shard (the scripts reach it through the shard base too)
-- KEYS[2 ..] run index sets of the runs (members: id \0 thread \0 namespace)
-- ARGV[1] shard base: thread bases are base .. "t:" .. thread
-- ARGV[2] stream maxlen (0: no events), ARGV[3] feed maxlen
-- ARGV[4] the run ids, for the events: len ":" run id, repeated
-- Returns: the number of checkpoints deleted. Each thread that lost checkpoints gets an event
-- {t runs_deleted, th thread, runs ARGV[4], n count} in its stream and the shard's feed.
-- A run index entry is acted on only if the checkpoint still names that run index (field "r"): a checkpoint
-- re-put under another run is left alone. Values no remaining checkpoint of the namespace points to are removed.
local base = ARGV[1]
local deleted = 0
local maxlen, feedmaxlen = tonumber(ARGV[2]), tonumber(ARGV[3])
local touched = {} -- "thread \0 namespace" -> {thread, namespace}
local perthread = {} -- thread -> checkpoints deleted
for k = 2, #KEYS do
  for _, member in ipairs(redis.call('SMEMBERS', KEYS[k])) do
    local parts = split0(member)
    local id, enct, encns = parts[1], parts[2], parts[3]
    local cp = base .. 't:' .. enct .. ':n:' .. encns .. ':cp:' .. id
    if redis.call('HGET', cp, 'r') == KEYS[k] then
      local d = drop_checkpoint(base, enct, encns, id)
      deleted = deleted + d
      perthread[enct] = (perthread[enct] or 0) + d
      touched[enct .. '\0' .. encns] = {enct, encns}
    end
  end
  redis.call('DEL', KEYS[k])
end
for _, tn in pairs(touched) do
  collect_namespace(base, tn[1], tn[2])
end
if maxlen > 0 then
  for enct, n in pairs(perthread) do
    if n > 0 then
      publish(base .. 't:' .. enct .. ':events', base .. 'feed', maxlen, feedmaxlen,
        {'t', 'runs_deleted', 'th', enct, 'runs', ARGV[4], 'n', tostring(n)})
    end
  end
end
return deleted
