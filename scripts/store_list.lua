-- store_list.lua: one page of the namespaces of a store that hold a live item, matched on
-- prefix and suffix (with wildcards), truncated to a depth, in tuple order (package redisstore).
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns": score 0, members
--            sortable form "\0\0" encoded form (so lex order is tuple order). The indexes
--            {P}:n:NS, {P}:x:NS and {P}:exp are built from ARGV[1] and share its hash tag.
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> ZRANGEBYLEX min of the registry range to walk ("-" or "[" .. sortable prefix)
-- ARGV[3] -> ZRANGEBYLEX max ("+" or "(" .. sortable prefix with its last terminator raised)
-- ARGV[4] -> offset: namespaces to skip
-- ARGV[5] -> limit: namespaces to return at most
-- ARGV[6] -> max depth: 0 for none, else namespaces are cut to that many labels (and deduplicated)
-- ARGV[7] -> np, the number of prefix labels; ARGV[8 .. 7+np] the labels, encoded, "*" for any
-- ARGV[8+np] -> ns, the number of suffix labels; then the ns suffix labels, encoded, "*" for any
-- Returns: the encoded namespaces (encoded labels joined by ":"), in order

local base = ARGV[1]
local registry = KEYS[1]
local offset, limit, depth = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
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

local out, seen, last = {}, 0, nil
local min, max = ARGV[2], ARGV[3]
local chunk = 256
local done = false
while not done do
  local members = redis.call('ZRANGEBYLEX', registry, min, max, 'LIMIT', 0, chunk)
  if #members < chunk then done = true end
  for _, member in ipairs(members) do
    min = '(' .. member
    local at = string.find(member, '\0\0', 1, true)
    local ns = at and string.sub(member, at + 2) or ''
    local labels = split_labels(ns)
    if at and matches(labels) then
      local live = liveness(ns)
      if live < 0 then
        redis.call('ZREM', registry, member)
        redis.call('ZREM', base .. 'exp', member)
        redis.call('DEL', base .. 'x:' .. ns)
      elseif live > 0 then
        local name = ns
        if depth > 0 and #labels > depth then
          name = table.concat(labels, ':', 1, depth)
        end
        if name ~= last then
          last = name
          seen = seen + 1
          if seen > offset then
            out[#out + 1] = name
            if #out >= limit then
              done = true
              break
            end
          end
        end
      end
    end
  end
end
return out
