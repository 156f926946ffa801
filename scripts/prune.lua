-- prune.lua: keeps the newest checkpoint of each namespace of a thread, with what it needs to be read back whole.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- KEYS[3] reclaim queue zset of the shard (unused; delete_thread.lua's shape)
-- KEYS[4] event stream of the thread
-- KEYS[5] event feed of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] unused (the event stream's retention after a deletion, for delete_thread.lua's shape)
-- ARGV[4] unused (delete_thread.lua's reclaim budget)
-- ARGV[5 ..] event spec: stream maxlen (0: no event), feed maxlen, e, then e event field/value pairs
-- Returns: the number of checkpoints deleted; the event, sent only when some were, gets the field "n".
--          "DATALOSS <what>" when the thread's head or registry entry is missing.
-- Kept per namespace: the newest checkpoint L (with its writes) and, for each channel L has a version of
-- but no value for (a delta channel), every ancestor from L's parent up to the nearest one holding a value
-- for it, so that delta history still reaches its seed. Values no kept checkpoint points to are removed.
-- Work bound: O(checkpoints and values of the thread) -- NOT yet bounded (see docs/storage-format.md).
local sb, enct = ARGV[1], ARGV[2]
local maxlen, feedmaxlen, event = event_spec(5)
local now = now_ms()
local gen, state, detail = thread_state(sb, enct, now)
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' then return 0 end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
local deleted = 0
for _, encns in ipairs(redis.call('SMEMBERS', gb .. ':ns')) do
  local nb = gb .. ':n:' .. encns
  local blobs = nb .. ':blobs'
  local ids = redis.call('ZREVRANGE', nb .. ':idx', 0, -1)
  local keep, refs, latest = {}, {}, ids[1]
  local function mark(flat)
    for i = 1, #flat, 2 do
      if string.sub(flat[i], 1, 2) == 'c:' then refs[blob_field(string.sub(flat[i], 3), flat[i + 1])] = true end
    end
  end
  if latest then
    keep[latest] = true
    -- Channels of the latest checkpoint without a value of their own.
    local open, nopen, cur = {}, 0, nil
    local flat = redis.call('HGETALL', nb .. ':cp:' .. latest)
    if #flat == 0 then return dataloss('checkpoint hash ' .. nb .. ':cp:' .. latest) end
    mark(flat)
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
    while cur and nopen > 0 and guard > 0 and not keep[cur] do
      guard = guard - 1
      local pf = redis.call('HGETALL', nb .. ':cp:' .. cur)
      if #pf == 0 then break end
      keep[cur] = true
      mark(pf)
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
    if not keep[id] then deleted = deleted + drop_checkpoint(sb, enct, encns, gen, id) end
  end
  local drop = {}
  for _, f in ipairs(redis.call('HKEYS', blobs)) do
    if not refs[f] then drop[#drop + 1] = f end
  end
  if #drop > 0 then chunked('HDEL', blobs, drop, 1000) end
end
if deleted > 0 and maxlen > 0 then
  event[#event + 1] = 'n'
  event[#event + 1] = tostring(deleted)
  publish(KEYS[4], KEYS[5], maxlen, feedmaxlen, event)
end
return deleted
