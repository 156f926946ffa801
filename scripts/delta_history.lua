-- delta_history.lua: the writes of delta channels since their nearest seed, walking the parent chain in one call.
-- KEYS[1] index zset of the (thread, namespace)
-- KEYS[2] blobs hash of the (thread, namespace)
-- ARGV[1] namespace base: checkpoint keys are base .. ":cp:" .. id
-- ARGV[2] target checkpoint id, or "" for the latest
-- ARGV[3 ..] channels
-- Returns: nil when the target does not exist, else one entry per channel, in ARGV order:
--          {seed value or false, {writes of one checkpoint as field, value, ...}, ...}
--          with the checkpoints nearest the target first. The walk starts at the target's parent
--          (the target's own writes are never included), collects each ancestor's writes to the
--          channel, and stops for that channel at the first ancestor holding a value for it
--          (whose own writes are included).
local base, id = ARGV[1], ARGV[2]
if id == '' then
  local top = redis.call('ZREVRANGE', KEYS[1], 0, 0)
  if #top == 0 then return nil end
  id = top[1]
end
local parent = redis.call('HGET', base .. ':cp:' .. id, 'p')
if parent == false and redis.call('HEXISTS', base .. ':cp:' .. id, 'v') == 0 then return nil end

local nch = #ARGV - 2
local out, open, slot = {}, 0, {}
for i = 1, nch do
  local ch = ARGV[i + 2]
  out[i] = {false}
  if not slot[ch] then
    slot[ch] = {}
    open = open + 1
  end
  table.insert(slot[ch], i)
end
local done = {}

-- The channel of a stored write: its value starts with len(channel) ":" channel.
local function write_channel(v)
  local colon = string.find(v, ':', 1, true)
  if not colon then return nil end
  local n = tonumber(string.sub(v, 1, colon - 1))
  if not n then return nil end
  return string.sub(v, colon + 1, colon + n)
end

-- Parent links never cycle, but a hand-edited key could: bound the walk by the index size.
local guard = redis.call('ZCARD', KEYS[1]) + 1
local cur = parent
while cur and open > 0 and guard > 0 do
  guard = guard - 1
  local flat = redis.call('HGETALL', base .. ':cp:' .. cur)
  if #flat == 0 then break end
  -- Tables are made only when needed: most ancestors hold a write or two.
  local groups, versions, nextp = nil, nil, false
  for i = 1, #flat, 2 do
    local f = flat[i]
    local b1, b2 = string.byte(f, 1, 2)
    if b2 == 58 and b1 == 119 then -- "w:"
      local v = flat[i + 1]
      local ch = write_channel(v)
      if ch and slot[ch] and not done[ch] then
        groups = groups or {}
        local g = groups[ch]
        if not g then
          g = {}
          groups[ch] = g
        end
        g[#g + 1] = f
        g[#g + 1] = v
      end
    elseif b2 == 58 and b1 == 99 then -- "c:"
      versions = versions or {}
      versions[string.sub(f, 3)] = flat[i + 1]
    elseif f == 'p' then
      nextp = flat[i + 1]
    end
  end
  if groups then
    for ch, g in pairs(groups) do
      for _, i in ipairs(slot[ch]) do table.insert(out[i], g) end
    end
  end
  if versions then
    for ch, idxs in pairs(slot) do
      if not done[ch] and versions[ch] then
        local val = redis.call('HGET', KEYS[2], blob_field(ch, versions[ch]))
        if val and val ~= '' then
          done[ch] = true
          open = open - 1
          for _, i in ipairs(idxs) do out[i][1] = val end
        end
      end
    end
  end
  cur = nextp
end
return out
