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
-- ARGV[8] "1" to answer the places of values (what encryption at rest needs for their associated data: a
--         seed's version, the checkpoint of each group of writes), else "0"
-- ARGV[9 ..] the channels still open
-- Returns: nil when the target does not exist (or its thread expired), else
--          {target id, generation, next cursor ("" when the walk is over), then one flat list per channel, in
--          ARGV order: {seed value or false, then per checkpoint with writes to it, nearest the target first:
--          n, then its n writes as field, value, ..., ...}} (n >= 1; a channel ARGV repeats gets the same list).
--          With ARGV[8] "1" a seed is {value, version} and each checkpoint's n is followed by its id.
--          A channel stops at the first ancestor holding a value for it (whose own writes are included). The
--          walk is over when every channel stopped or the chain ends (a root, or a parent that was deleted
--          and is in no index).
--          Errors: "DATALOSS <what>" for a missing indexed checkpoint hash, a missing value, a lost head;
--          "CYCLE <id>" when a later step returns to its first ancestor ARGV[5]: the cycle may have gone through
--          ancestors of earlier steps, which this step cannot tell. Otherwise the chain returning to a checkpoint
--          the step visited (the target included) ends the walk, as a parent that was deleted does: a cycle
--          (made by putting again the ID of a deleted checkpoint) that one step closes is walked once. (In a
--          later step the first checkpoint met again is its first ancestor whenever the cycle holds ancestors
--          of earlier steps.) "CHANGED <what>" when the generation changed (ARGV[6]), or when the cursor
--          ancestor ARGV[5], which the previous step returned only because it existed, was deleted since (a
--          Prune or DeleteForRuns during the walk: the history would be cut short).
-- Work bound: at most ARGV[7] ancestors, and no ancestor past the first once the step has read 10,000
--          checkpoint fields, collected 4,000 writes, or collected 2 MiB of writes and seeds (FIELDS, WRITES
--          and BYTES below: ancestors with many or large pending writes end the step sooner); each
--          ancestor O(its fields) (a write: one string.sub per distinct length of the open channels'
--          prefixes, at most one per channel) and one HGET per open channel it holds a version of, none when
--          this step already read that version's value empty.
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
    local top = redis.call('ZREVRANGE', idx, '0', '0')
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

local places = ARGV[8] == '1'
local nch = #ARGV - 8
-- Per open channel: its list in the reply and that list's length, the name of its version field
-- "c:" .. ch, and the prefix len(ch) ":" ch of its writes' values (and of its blob fields). lens holds
-- the distinct lengths of those prefixes: a write's channel is found by one string.sub per length
-- (usually one) and a table lookup, whatever the number of channels.
local list, size, pfxof, byfield, bypfx, lens, haslen, out = {}, {}, {}, {}, {}, {}, {}, {}
local open = 0
for i = 1, nch do
  local ch = ARGV[i + 8]
  if not list[ch] then
    local pfx = blob_field(ch, '') -- the blob fields of its versions start with it
    list[ch], size[ch], pfxof[ch] = {false}, 1, pfx
    byfield['c:' .. ch] = ch
    bypfx[pfx] = ch
    local n = string.len(pfx)
    if not haslen[n] then
      haslen[n] = true
      lens[#lens + 1] = n
    end
    open = open + 1
  end
  out[i] = list[ch]
end
local nlens = #lens
-- done[ch]: its seed is found. empty[ch]: the last version of it this step read, whose value is "": an
-- ancestor with the same version points to the same blob field, which needs no second read. group[ch]:
-- the step of its last group of writes, whose count is at list[ch][count[ch]]. pend/pendv: the open
-- channels of the current ancestor whose value is to be read (reused: no table per ancestor).
local done, empty, group, count, pend, pendv = {}, {}, {}, {}, {}, {}
-- kind[f]: what a field name is, learnt once per name (checkpoints repeat their field names, but for
-- the writes of a new task): 1 for "p", the channel for the "c:" field of an open channel, false for
-- any other field but a write's; a write's field ("w:") is told by its first bytes and not kept.
local kind = {p = 1}
local byte, sub = string.byte, string.sub

-- The fields a step reads at most before its last ancestor: with the ancestor budget, what bounds a step's
-- time whatever the size of the ancestors.
local FIELDS = 10000
-- Likewise the writes it collects: a collected write costs about three times a field it passes over (it
-- is kept, then returned), so that ancestors of many writes to the walked channels end the step sooner.
local WRITES = 4000
-- And the bytes of the writes and seeds it collects (large writes end the step sooner): each byte is
-- hashed as it enters Lua and copied as it leaves.
local BYTES = 2097152
local visited = {[id] = true}
local cpbase = nb .. ':cp:'
local steps, fields, bytes, nwrites = 0, 0, 0, 0
while cur and open > 0 and steps < budget and fields < FIELDS and nwrites < WRITES and bytes < BYTES do
  if visited[cur] then
    if cur == cursor then return redis.error_reply('CYCLE parent chain returns to ' .. cur) end
    cur = nil
    break
  end
  visited[cur] = true
  steps = steps + 1
  local cpkey = cpbase .. cur
  local flat = redis.call('HGETALL', cpkey)
  if #flat == 0 then
    if redis.call('ZSCORE', idx, cur) then return dataloss('checkpoint hash ' .. cpkey) end
    -- The previous step returned this ancestor as its cursor only while it existed: it was deleted since
    -- (a Prune or DeleteForRuns), and ending the walk here would answer a history cut short.
    if cur == cursor then return redis.error_reply('CHANGED checkpoint ' .. cur .. ' was deleted during the walk') end
    cur = nil
    break
  end
  fields = fields + #flat / 2
  local nextp, np = false, 0
  for i = 1, #flat, 2 do
    local f = flat[i]
    local k = kind[f]
    if k == nil then
      local b1, b2 = byte(f, 1, 2)
      if b2 == 58 and b1 == 119 then -- "w:"
        k = true
      else
        k = byfield[f] or false
        kind[f] = k
      end
    end
    if k == true then -- a write: its value starts with len(channel) ":" channel
      local v = flat[i + 1]
      for j = 1, nlens do
        local ch = bypfx[sub(v, 1, lens[j])]
        if ch then
          if not done[ch] then
            local l, n = list[ch], size[ch]
            if group[ch] ~= steps then
              group[ch] = steps
              n = n + 1
              count[ch] = n
              l[n] = 1
              if places then
                n = n + 1
                l[n] = cur
              end
            else
              l[count[ch]] = l[count[ch]] + 1
            end
            l[n + 1] = f
            l[n + 2] = v
            size[ch] = n + 2
            bytes = bytes + #v
            nwrites = nwrites + 1
          end
          break
        end
      end
    elseif k == 1 then
      nextp = flat[i + 1]
    elseif k and not done[k] and empty[k] ~= flat[i + 1] then -- the version of an open channel
      np = np + 1
      pend[np], pendv[np] = k, flat[i + 1]
    end
  end
  for j = 1, np do
    local ch, ver = pend[j], pendv[j]
    local field = pfxof[ch] .. ver -- the blob field of the version, as lib.lua's blob_field makes it
    local val = redis.call('HGET', blobs, field)
    if not val then return dataloss('value ' .. field .. ' of ' .. cpkey .. ' in ' .. blobs) end
    if val == '' then
      empty[ch] = ver
    else
      done[ch] = true
      open = open - 1
      if places then list[ch][1] = {val, ver} else list[ch][1] = val end
      bytes = bytes + #val
    end
  end
  cur = nextp
end
-- The next step continues from cur only if it exists now: a parent deleted before the walk ends it here, as
-- it would within a step, so that the next step can tell a checkpoint deleted during the walk.
local nextcur = ''
if cur and open > 0 then
  if redis.call('EXISTS', cpbase .. cur) == 1 then
    nextcur = cur
  elseif redis.call('ZSCORE', idx, cur) then
    return dataloss('checkpoint hash ' .. cpbase .. cur)
  end
end
local reply = {id, gen, nextcur}
for i = 1, nch do reply[i + 3] = out[i] end
return reply
