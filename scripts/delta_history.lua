-- delta_history.lua: one bounded step of the walk up a checkpoint's parent chain that collects the writes of
-- delta channels since their nearest seed. The client repeats it from the cursor it returns.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] target checkpoint id, or "" for the latest (first step only)
-- ARGV[5] cursor: "" on the first step (the walk starts at the target's parent), else the ancestor id the
--         previous step returned
-- ARGV[6] the generation the first step read ("" on the first step): a changed generation ends the walk
--         with the error "CHANGED"
-- ARGV[7] budget: ancestors to visit at most in this step
-- ARGV[8 ..] the channels still open
-- Returns: nil when the target does not exist (or its thread expired), else
--          {target id, generation, next cursor ("" when the walk is over), then one entry per channel, in
--          ARGV order: {seed value or false, {writes of one checkpoint as field, value, ...}, ...}} with the
--          checkpoints nearest the target first. A channel stops at the first ancestor holding a value for
--          it (whose own writes are included). The walk is over when every channel stopped or the chain
--          ends (a root, or a parent that was deleted and is in no index).
--          Errors: "DATALOSS <what>" for a missing indexed checkpoint hash, a missing value, a lost head;
--          "CYCLE <id>" when the parent chain returns to a checkpoint this step visited.
-- Work bound: at most ARGV[7] ancestors, each O(its fields).
local sb, enct, encns, cursor = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
local budget = tonumber(ARGV[7])
local now = now_ms()
local gen, state, detail = thread_state(sb, enct, now, true)
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' then
  if ARGV[6] ~= '' then return redis.error_reply('CHANGED thread is gone') end
  return nil
end
if ARGV[6] ~= '' and ARGV[6] ~= gen then return redis.error_reply('CHANGED thread was replaced') end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns
local idx, blobs = nb .. ':idx', nb .. ':blobs'
local lost = check_gen(gb, encns)
if lost then return lost end

local id = ARGV[4]
local cur
if cursor == '' then
  if id == '' then
    local top = redis.call('ZREVRANGE', idx, 0, 0)
    if #top == 0 then return nil end
    id = top[1]
  end
  local h = redis.call('HMGET', nb .. ':cp:' .. id, 'v', 'p')
  if not h[1] then
    if redis.call('ZSCORE', idx, id) then return dataloss('checkpoint hash ' .. nb .. ':cp:' .. id) end
    return nil
  end
  cur = h[2]
else
  cur = cursor
end

local nch = #ARGV - 7
local out, open, slot = {}, 0, {}
for i = 1, nch do
  local ch = ARGV[i + 7]
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

local visited = {[id] = true}
local steps = 0
while cur and open > 0 and steps < budget do
  if visited[cur] then return redis.error_reply('CYCLE parent chain returns to ' .. cur) end
  visited[cur] = true
  steps = steps + 1
  local cpkey = nb .. ':cp:' .. cur
  local flat = redis.call('HGETALL', cpkey)
  if #flat == 0 then
    if redis.call('ZSCORE', idx, cur) then return dataloss('checkpoint hash ' .. cpkey) end
    cur = nil
    break
  end
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
        local field = blob_field(ch, versions[ch])
        local val = redis.call('HGET', blobs, field)
        if not val then return dataloss('value ' .. field .. ' of ' .. cpkey .. ' in ' .. blobs) end
        if val ~= '' then
          done[ch] = true
          open = open - 1
          for _, i in ipairs(idxs) do out[i][1] = val end
        end
      end
    end
  end
  cur = nextp
end
local nextcur = ''
if cur and open > 0 then nextcur = cur end
local reply = {id, gen, nextcur}
for i = 1, nch do reply[#reply + 1] = out[i] end
return reply
