-- store_scan.lua: one bounded step of a walk over the store items under a namespace prefix
-- (package redisstore). The walk visits the namespaces in registry order and, in each, the items
-- newest first; it resumes where the previous step stopped, from the cursor it returned.
-- Ranking, filtering and paging happen in the client.
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns" (names the slot; {P}:n:NS, {P}:x:NS,
--            {P}:exp and the item hashes {P}:i:NS:K are built from ARGV[1] and share its hash tag)
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> ZRANGEBYLEX min of the registry range of the prefix ("-" or "[" .. sortable prefix)
-- ARGV[3] -> ZRANGEBYLEX max ("+" or "(" .. sortable prefix with its last terminator raised)
-- ARGV[4] -> cursor: registry member of the namespace the walk is in ("" before the first)
-- ARGV[5] -> cursor: score of the last item read in it ("" when the namespace is done)
-- ARGV[6] -> cursor: encoded key of the last item read in it
-- ARGV[7] -> cursor: items already read in that namespace
-- ARGV[8] -> per-namespace cap: items to read at most in one namespace (0 for all)
-- ARGV[9] -> fields to return per item: "u" (UpdatedAt only), "uw" (and vectors), "uv" (and
--            value), "uvw" (both)
-- ARGV[10] -> budget: bytes to return at most (an item costs 64 plus its fields' lengths)
-- ARGV[11] -> index entries to read at most, live or not (namespaces count one each); at least 2
-- Returns: {done, member, score, key, taken, entries...}: done is 1 when the walk is over; the
--          next four are the cursor to pass back; each entry is a list {id, updated, n, w, v}
--          (false for a field not asked for), id being the encoded namespace ":" encoded key.
-- Errors, before anything is written: "DATALOSS <what>" for a registry without its marker member "", a
--          namespace the registry names without its index (unless {P}:exp names it: its items had a
--          TTL), or an index entry whose item hash is gone while its expiry index does not say it
--          expired.
-- Work bound: at most ARGV[11] index entries and namespaces, and about ARGV[10] bytes, per call;
--             each entry costs one HMGET (and a ZSCORE when its item is gone). The index entries of
--             expired items met are removed, and namespaces found empty leave the registry.

local registry_lost = check_store_registry(KEYS[1])
if registry_lost then return registry_lost end
local base = ARGV[1]
local registry = KEYS[1]
local hi = ARGV[3]
local member, score, last, taken = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
local cap = tonumber(ARGV[8])
local mode = ARGV[9]
local budget, steps = tonumber(ARGV[10]), tonumber(ARGV[11])
local want_w = string.find(mode, 'w', 1, true) ~= nil
local want_v = string.find(mode, 'v', 1, true) ~= nil
local fields = {'u', 'n', 'w', 'v'}
if not want_v then fields[4] = nil end
if not want_w then fields = {'u', 'v'} end
if not want_v and not want_w then fields = {'u'} end
local sbyte = string.byte

local function nsof(m)
  local at = string.find(m, '\0\0', 1, true)
  if not at then return nil end
  return string.sub(m, at + 2)
end

-- a < b by bytes (Lua's own < on strings follows the server's locale).
local function bytes_less(a, b)
  if a == b then return false end
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = sbyte(a, i), sbyte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Every write waits for the end of the step (Redis does not roll a script back, and a step may still
-- find lost data): the index entries of expired items, then the namespaces they may have emptied.
local stales, emptied = {}, {}

local now = lazy_clock() -- read once, when an item is found gone

-- The rank (newest first) at which to resume after the item (score, key): right after it when
-- it is still there unchanged, else at the first item with that score, skipping below those
-- already read (ties come in descending key order).
local function resume(nkey)
  if last == '' then return 0, false end
  local r = redis.call('ZREVRANK', nkey, last)
  if r and tonumber(redis.call('ZSCORE', nkey, last)) == tonumber(score) then return r + 1, false end
  return redis.call('ZCOUNT', nkey, '(' .. score, '+inf'), true
end

local out = {0, '', '', '', 0}
local spent = 0
local done = false
local regs, ri = {}, 1
local start = ARGV[2]
if start == '-' then start = '(' end -- after the marker member ""
if member ~= '' then
  if score == '' then
    start = '(' .. member
  else
    regs[1] = member
  end
end

while steps > 0 and spent < budget do
  if ri > #regs then
    if #regs > 0 then start = '(' .. regs[#regs] end
    regs = redis.call('ZRANGEBYLEX', registry, start, hi, 'LIMIT', 0, math.min(steps, 64))
    ri = 1
    if #regs == 0 then
      done = true
      break
    end
  end
  local m = regs[ri]
  local ns = nsof(m)
  if m ~= member then
    -- Enter a namespace only with room to read in it: a cursor at a namespace with no score
    -- means the namespace is done.
    if steps < 2 then break end
    member, score, last, taken = m, '', '', 0
    steps = steps - 1
  end
  local finished = true
  if ns and redis.call('EXISTS', base .. 'n:' .. ns) == 0 then
    -- A namespace the registry names has its index: the scripts that empty one drop it from the
    -- registry at once, but for a step that removed the entries of its expired items (an earlier
    -- version left it named; the expiry index {P}:exp names it then). One lost would read as a
    -- namespace without items. One that left the registry since the cursor named it is done.
    if redis.call('ZSCORE', registry, m) then
      local lost = store_index_lost(base, m, ns)
      if lost then return lost end
      emptied[#emptied + 1] = {m, ns}
    end
  elseif ns then
    local nkey = base .. 'n:' .. ns
    local from, skipping = resume(nkey)
    local tiescore, tiekey = score, last
    local room = steps
    if cap > 0 then room = math.min(room, cap - taken) end
    local n = math.min(room, 64)
    local chunk = {}
    if n > 0 then chunk = redis.call('ZREVRANGE', nkey, from, from + n - 1, 'WITHSCORES') end
    local cut, stale = false, false
    for i = 1, #chunk, 2 do
      if spent >= budget then
        cut = true
        break
      end
      local k, sc = chunk[i], chunk[i + 1]
      steps = steps - 1
      score, last = sc, k
      if not (skipping and tonumber(sc) == tonumber(tiescore) and not bytes_less(k, tiekey)) then
        local r = redis.call('HMGET', base .. 'i:' .. ns .. ':' .. k, unpack(fields))
        if not r[1] then
          -- Gone: expired when its expiry index says so, else lost.
          local lost = store_item_lost(base, ns, k, now)
          if lost then return lost end
          stales[#stales + 1] = {nkey, base .. 'x:' .. ns, k}
          stale = true
        else
          taken = taken + 1
          local e = {ns .. ':' .. k, r[1], false, false, false}
          local cost = 64 + #k
          if want_w then
            e[3], e[4] = r[2] or false, r[3] or false
            if r[3] then cost = cost + #r[3] end
          end
          if want_v then
            local val = r[#fields]
            e[5] = val or false
            if val then cost = cost + #val end
          end
          spent = spent + cost
          out[#out + 1] = e
        end
      end
    end
    -- (Spelled out: the Lua of miniredis mis-evaluates "not a and b" here.)
    if cap > 0 and taken >= cap then
      finished = true
    elseif cut or n == 0 then
      finished = false
    else
      finished = #chunk < 2 * n
    end
    -- A namespace that gave a live item is not empty: no need to look. One whose expired entries
    -- this step removes is looked at even unfinished: the registry never names a namespace without
    -- its index.
    if stale or (finished and taken == 0) then emptied[#emptied + 1] = {m, ns} end
  end
  if finished then
    score, last, taken = '', '', 0
    ri = ri + 1
  end
end

for _, e in ipairs(stales) do
  redis.call('ZREM', e[1], e[3])
  redis.call('ZREM', e[2], e[3])
end
for _, e in ipairs(emptied) do store_drop_if_empty(base, registry, e[1], e[2]) end
if done then out[1] = 1 end
out[2], out[3], out[4], out[5] = member, score, last, taken
return out
