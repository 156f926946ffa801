-- store_list.lua: one bounded step of a walk over the namespaces of a store that hold a live
-- item, matched on prefix and suffix (with wildcards), truncated to a depth, in tuple order
-- (package redisstore). Offset and limit apply in the client.
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns": score 0, members
--            sortable form "\0\0" encoded form (so lex order is tuple order). The indexes
--            {P}:n:NS, {P}:x:NS and {P}:exp are built from ARGV[1] and share its hash tag.
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> ZRANGEBYLEX min of the registry range to walk ("-" or "[" .. sortable prefix), or
--            "(" .. the last member the previous step examined
-- ARGV[3] -> ZRANGEBYLEX max ("+" or "(" .. sortable prefix with its last terminator raised)
-- ARGV[4] -> budget: registry members to examine at most (at least 1)
-- ARGV[5] -> limit: namespaces to return at most (distinct after the cut)
-- ARGV[6] -> max depth: 0 for none, else namespaces are cut to that many labels (and consecutive
--            equal ones returned once)
-- ARGV[7] -> np, the number of prefix labels; ARGV[8 .. 7+np] the labels, encoded, "*" for any
-- ARGV[8+np] -> ns, the number of suffix labels; then the ns suffix labels, encoded, "*" for any
-- Returns: {last, names...}: last is the last member examined ("" when the walk is over), then
--          the encoded namespaces (encoded labels joined by ":") in order; a step may return a
--          name the previous step returned last (the client drops it)
--          "DATALOSS <what>", before anything is written, for a registry without its marker member "", or
--          a namespace the registry names without its index (unless {P}:exp names it: its items had a TTL).
-- Work bound: at most ARGV[4] registry members, each with O(log n) liveness checks, per call.

local registry_lost = check_store_registry(KEYS[1])
if registry_lost then return registry_lost end
local base = ARGV[1]
local registry = KEYS[1]
local budget, limit, depth = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local np = tonumber(ARGV[7])
local prefix, suffix = {}, {}
for i = 1, np do prefix[i] = ARGV[7 + i] end
local nsuf = tonumber(ARGV[8 + np])
for i = 1, nsuf do suffix[i] = ARGV[8 + np + i] end

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local function split_labels(ns)
  local out, from = {}, 1
  while true do
    local at = string.find(ns, ':', from, true)
    if not at then
      out[#out + 1] = string.sub(ns, from)
      return out
    end
    out[#out + 1] = string.sub(ns, from, at - 1)
    from = at + 1
  end
end

local function matches(labels)
  local n = #labels
  if n < np or n < nsuf then return false end
  for i = 1, np do
    if prefix[i] ~= '*' and prefix[i] ~= labels[i] then return false end
  end
  for i = 1, nsuf do
    local want = suffix[nsuf - i + 1]
    if want ~= '*' and want ~= labels[n - i + 1] then return false end
  end
  return true
end

-- 1 when the namespace holds an item that has not expired, 0 when its items all
-- expired (their entries wait for a sweep), -1 when it holds nothing at all.
local function liveness(ns)
  local n = redis.call('ZCARD', base .. 'n:' .. ns)
  if n == 0 then return -1 end
  local xkey = base .. 'x:' .. ns
  if n > redis.call('ZCARD', xkey) then return 1 end
  if #redis.call('ZRANGEBYSCORE', xkey, string.format('%.0f', now_ms), '+inf', 'LIMIT', 0, 1) > 0 then return 1 end
  return 0
end

local out, last = {''}, nil
local emptied = {} -- namespaces to drop from the registry, at the end: no write before a DATALOSS
local min, max = ARGV[2], ARGV[3]
if min == '-' then min = '(' end -- after the marker member ""
local done = false
while not done and budget > 0 do
  local asked = math.min(budget, 256)
  local members = redis.call('ZRANGEBYLEX', registry, min, max, 'LIMIT', 0, asked)
  if #members == 0 then
    out[1] = ''
    break
  end
  for _, member in ipairs(members) do
    min = '(' .. member
    out[1] = member
    budget = budget - 1
    local at = string.find(member, '\0\0', 1, true)
    local ns = at and string.sub(member, at + 2) or ''
    local labels = split_labels(ns)
    if at and matches(labels) then
      local live = liveness(ns)
      if live < 0 then
        -- The scripts that empty a namespace drop it from the registry at once, but for a walk that
        -- removed the entries of its expired items (an earlier version left it named; {P}:exp names
        -- it then): dropped at the end of the step. Else its index was lost, and it would read as a
        -- namespace without items.
        local lost = store_index_lost(base, member, ns)
        if lost then return lost end
        emptied[#emptied + 1] = {member, ns}
      elseif live > 0 then
        local name = ns
        if depth > 0 and #labels > depth then
          name = table.concat(labels, ':', 1, depth)
        end
        if name ~= last then
          last = name
          out[#out + 1] = name
          if #out > limit then
            done = true
            break
          end
        end
      end
    end
    if budget <= 0 then break end
  end
  if not done and #members < asked then
    out[1] = ''
    done = true
  end
end
for _, e in ipairs(emptied) do store_drop_if_empty(base, registry, e[1], e[2]) end
return out
