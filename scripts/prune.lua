-- prune.lua: keeps the newest checkpoint of each namespace of a thread, with what it needs to be read back whole.
-- KEYS[1] namespaces set of the thread
-- KEYS[2] index zset of the thread
-- KEYS[3] thread registry zset of the shard
-- KEYS[4] index zset of every checkpoint of the shard
-- ARGV[1] shard base: thread bases are base .. "t:" .. thread
-- KEYS[5] event stream of the thread
-- KEYS[6] event feed of the shard
-- ARGV[2] encoded thread
-- ARGV[3] unused (the event stream's retention after a deletion, for delete_thread.lua's shape)
-- ARGV[4 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- Returns: the number of checkpoints deleted; the event, sent only when some were, gets the field "n".
-- Kept per namespace: the newest checkpoint L (with its writes) and, for each channel L has a version of
-- but no value for (a delta channel), every ancestor from L's parent up to the nearest one holding a value
-- for it, so that delta history still reaches its seed. Values no kept checkpoint points to are removed.
local base, enct = ARGV[1], ARGV[2]
local maxlen, feedmaxlen, event = event_spec(4)
local tbase = base .. 't:' .. enct
local deleted = 0
for _, encns in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local nsbase = tbase .. ':n:' .. encns
  local blobs = nsbase .. ':blobs'
  local ids = redis.call('ZREVRANGE', nsbase .. ':idx', 0, -1)
  local keep, latest = {}, nil
  for _, id in ipairs(ids) do
    if redis.call('EXISTS', nsbase .. ':cp:' .. id) == 1 then
      latest = id
      break
    end
  end
  if latest then
    keep[latest] = true
    -- Channels of the latest checkpoint without a value of their own.
    local open, nopen, cur = {}, 0, nil
    local flat = redis.call('HGETALL', nsbase .. ':cp:' .. latest)
    for i = 1, #flat, 2 do
      local f = flat[i]
      if string.sub(f, 1, 2) == 'c:' then
        local ch = string.sub(f, 3)
        local v = redis.call('HGET', blobs, blob_field(ch, flat[i + 1]))
        if not v or v == '' then
          open[ch] = true
          nopen = nopen + 1
        end
      elseif f == 'p' then
        cur = flat[i + 1]
      end
    end
    local guard = #ids
    while cur and nopen > 0 and guard > 0 do
      guard = guard - 1
      local pf = redis.call('HGETALL', nsbase .. ':cp:' .. cur)
      if #pf == 0 then break end
      keep[cur] = true
      local nextp = nil
      for i = 1, #pf, 2 do
        local f = pf[i]
        if string.sub(f, 1, 2) == 'c:' then
          local ch = string.sub(f, 3)
          if open[ch] then
            local v = redis.call('HGET', blobs, blob_field(ch, pf[i + 1]))
            if v and v ~= '' then
              open[ch] = nil
              nopen = nopen - 1
            end
          end
        elseif f == 'p' then
          nextp = pf[i + 1]
        end
      end
      cur = nextp
    end
  end
  for _, id in ipairs(ids) do
    if not keep[id] then deleted = deleted + drop_checkpoint(base, enct, encns, id) end
  end
  collect_namespace(base, enct, encns)
end
if deleted > 0 and maxlen > 0 then
  event[#event + 1] = 'n'
  event[#event + 1] = tostring(deleted)
  publish(KEYS[5], KEYS[6], maxlen, feedmaxlen, event)
end
return deleted
