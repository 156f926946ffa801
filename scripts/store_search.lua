-- store_search.lua: one page of the store items under a namespace prefix, filtered inside Redis
-- before the offset and limit apply; newest first, or ranked by exact cosine similarity to a
-- query vector (package redisstore).
-- KEYS[1] -> namespace registry zset of the store, "{P}:ns" (names the slot; {P}:n:NS, {P}:x:NS,
--            {P}:exp and the item hashes {P}:i:NS:K are built from ARGV[1] and share its hash tag)
-- ARGV[1] -> key base "{P}:"
-- ARGV[2] -> ZRANGEBYLEX min of the registry range of the prefix ("-" or "[" .. sortable prefix)
-- ARGV[3] -> ZRANGEBYLEX max ("+" or "(" .. sortable prefix with its last terminator raised)
-- ARGV[4] -> offset: matches to skip
-- ARGV[5] -> limit: matches to return at most (at least 1)
-- ARGV[6] -> filter: JSON array of conditions [[label, ...], op, operand] with op one of
--            eq ne gt ge lt le; "" for none
-- ARGV[7] -> "1" to extend the TTL of the items returned (those stored with one)
-- ARGV[8] -> d, the dimensions of the query vector; 0 for no query (newest UpdatedAt first)
-- ARGV[9] -> "1" when the query vector is zero (every score is then 0)
-- ARGV[10 .. 9+d] -> the query vector scaled to unit length, one decimal component each
-- Returns: one {id, value, created, updated, score} per item, in result order; id is the
--          encoded namespace ":" encoded key, score the cosine as "%.17g", or false without a query

local base = ARGV[1]
local registry = KEYS[1]
local offset, limit = tonumber(ARGV[4]), tonumber(ARGV[5])
local conds = nil
if ARGV[6] ~= '' then conds = cjson.decode(ARGV[6]) end
local refresh = ARGV[7] == '1'
local dims = tonumber(ARGV[8])
local zeroq = ARGV[9] == '1'
local sbyte, floor = string.byte, math.floor

local clock = redis.call('TIME')
local now_ms = tonumber(clock[1]) * 1000 + floor(tonumber(clock[2]) / 1000)

-- Filters. A JSON null and a missing field are the same to a filter (miniredis decodes
-- null as nil, Redis as cjson.null).

local function isnull(v)
  return v == nil or v == cjson.null
end

-- Deep equality of decoded JSON.
local function same(a, b)
  if isnull(a) then return isnull(b) end
  if isnull(b) then return false end
  local ta = type(a)
  if ta ~= type(b) then return false end
  if ta ~= 'table' then return a == b end
  for k, va in pairs(a) do
    if not same(va, b[k]) then return false end
  end
  for k, vb in pairs(b) do
    if isnull(a[k]) and not isnull(vb) then return false end
  end
  return true
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

local function test(v, op, w)
  if op == 'eq' then return same(v, w) end
  if op == 'ne' then return not same(v, w) end
  local tv = type(v)
  if tv ~= type(w) then return false end
  if tv == 'number' then
    if op == 'gt' then return v > w end
    if op == 'ge' then return v >= w end
    if op == 'lt' then return v < w end
    return v <= w
  end
  if tv == 'string' then
    if op == 'gt' then return bytes_less(w, v) end
    if op == 'ge' then return not bytes_less(v, w) end
    if op == 'lt' then return bytes_less(v, w) end
    return not bytes_less(w, v)
  end
  return false
end

local function match(json)
  local ok, doc = pcall(cjson.decode, json or '')
  if not ok or type(doc) ~= 'table' then return false end
  for _, cond in ipairs(conds) do
    local v, path = doc, cond[1]
    for i = 1, #path do
      if type(v) ~= 'table' then
        v = nil
        break
      end
      v = v[path[i]]
    end
    if not test(v, cond[2], cond[3]) then return false end
  end
  return true
end

-- The namespaces under the prefix.

local regs = {}
local nsof = {}
for _, member in ipairs(redis.call('ZRANGEBYLEX', registry, ARGV[2], ARGV[3])) do
  local at = string.find(member, '\0\0', 1, true)
  if at then -- a member the store did not write is skipped
    regs[#regs + 1] = member
    nsof[#regs] = string.sub(member, at + 2)
  end
end
local stale, touched = {}, {}
local out = {}

local function itemkey(c, k)
  return base .. 'i:' .. nsof[c] .. ':' .. k
end

-- An index entry whose item expired: removed once the walk is over.
local function gone(c, k)
  stale[#stale + 1] = {c, k}
  touched[c] = true
end

-- r is {value, created, updated, ttl}.
local function emit(c, k, r, score)
  local ttl = tonumber(r[4])
  if refresh and ttl then
    local at = string.format('%.0f', now_ms + ttl)
    redis.call('PEXPIREAT', itemkey(c, k), at)
    redis.call('ZADD', base .. 'x:' .. nsof[c], at, k)
  end
  out[#out + 1] = {nsof[c] .. ':' .. k, r[1], r[2], r[3], score or false}
end

if dims == 0 then
  -- Newest first: a k-way merge of the namespaces' indexes (score = UpdatedAt), read in
  -- batches, through a binary heap of cursors ordered by (UpdatedAt desc, namespace order).
  local batch = math.max(16, math.min(offset + limit + 1, 1000))
  local buf, pos, start = {}, {}, {}
  local function fill(c)
    local b = redis.call('ZREVRANGE', base .. 'n:' .. nsof[c], start[c], start[c] + batch - 1, 'WITHSCORES')
    start[c] = start[c] + batch
    for i = 2, #b, 2 do b[i] = tonumber(b[i]) end
    buf[c], pos[c] = b, 1
    return #b > 0
  end
  local heap, hn = {}, 0
  local function before(a, b)
    local sa, sb = buf[a][pos[a] + 1], buf[b][pos[b] + 1]
    if sa ~= sb then return sa > sb end
    return a < b
  end
  local function down(i)
    while true do
      local l, m = 2 * i, i
      if l <= hn and before(heap[l], heap[m]) then m = l end
      if l + 1 <= hn and before(heap[l + 1], heap[m]) then m = l + 1 end
      if m == i then return end
      heap[i], heap[m] = heap[m], heap[i]
      i = m
    end
  end
  for c = 1, #regs do
    start[c] = 0
    if fill(c) then
      hn = hn + 1
      heap[hn] = c
    else
      touched[c] = true
    end
  end
  for i = floor(hn / 2), 1, -1 do down(i) end

  local matched = 0
  while hn > 0 and #out < limit do
    local c = heap[1]
    local k = buf[c][pos[c]]
    pos[c] = pos[c] + 2
    if pos[c] > #buf[c] and (#buf[c] < 2 * batch or not fill(c)) then
      heap[1] = heap[hn]
      heap[hn] = nil
      hn = hn - 1
    end
    if hn > 0 then down(1) end

    if conds or matched >= offset then
      local r = redis.call('HMGET', itemkey(c, k), 'v', 'c', 'u', 't')
      if not r[1] then
        gone(c, k)
      elseif not conds or match(r[1]) then
        matched = matched + 1
        if matched > offset then emit(c, k, r, nil) end
      end
    elseif redis.call('EXISTS', itemkey(c, k)) == 1 then
      matched = matched + 1
    else
      gone(c, k)
    end
  end
else
  -- Ranked by cosine similarity. Pass 1 scores every indexed item under the prefix from its
  -- int8 vectors (one byte per dimension, offset by 128, padded to a multiple of 16) and
  -- bounds the error: each vector's "s" holds 1/scale and r, the norm of its quantization
  -- residual, so its exact cosine lies within approx +- r. Pass 2 computes the exact cosine
  -- from the float32 vectors of the items whose upper bound reaches the k-th best lower
  -- bound (k = offset + limit): no other item can be in the top k.
  local stride = math.ceil(dims / 16) * 16
  local chunks = stride / 16
  local slack = 1e-9
  local Y, sumy = {}, 0
  for i = 1, stride do Y[i] = 0 end
  for i = 1, dims do
    Y[i] = tonumber(ARGV[9 + i])
    sumy = sumy + Y[i]
  end
  local YY = {}
  for l = 1, 16 do
    YY[l] = {}
    for j = 1, chunks do YY[l][j] = Y[(j - 1) * 16 + l] end
  end
  local Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8 = YY[1], YY[2], YY[3], YY[4], YY[5], YY[6], YY[7], YY[8]
  local Y9, Y10, Y11, Y12, Y13, Y14, Y15, Y16 = YY[9], YY[10], YY[11], YY[12], YY[13], YY[14], YY[15], YY[16]

  -- Pass 1a: the indexed items that pass the filter, one row per vector.
  local cc, ck, cpos, clb, cub = {}, {}, {}, {}, {}
  local rq, rinv, rres, ritem = {}, {}, {}, {}
  local n, rows = 0, 0
  local fields = {'c', 'n', 'q', 's'}
  if conds then fields[5] = 'v' end
  for c = 1, #regs do
    local members = redis.call('ZRANGE', base .. 'n:' .. nsof[c], 0, -1)
    if #members == 0 then touched[c] = true end
    for p, k in ipairs(members) do
      local r = redis.call('HMGET', itemkey(c, k), unpack(fields))
      local nv, q, sc = tonumber(r[2]), r[3], r[4]
      if not r[1] then
        gone(c, k)
      elseif nv and nv > 0 and q and sc and #q == nv * stride and (not conds or match(r[5])) then
        local scales = {}
        if nv == 1 then
          local inv, res = string.match(sc, '^(%S+) (%S+)$')
          scales = {tonumber(inv), tonumber(res)}
        else
          for x in string.gmatch(sc, '%S+') do scales[#scales + 1] = tonumber(x) end
        end
        if #scales == 2 * nv then
          n = n + 1
          cc[n], ck[n], cpos[n], clb[n], cub[n] = c, k, p, -math.huge, -math.huge
          for v = 1, nv do
            rows = rows + 1
            if nv == 1 then
              rq[rows] = q
            else
              rq[rows] = string.sub(q, (v - 1) * stride + 1, v * stride)
            end
            rinv[rows], rres[rows], ritem[rows] = scales[2 * v - 1], scales[2 * v], n
          end
        end
      end
    end
  end

  -- Pass 1b: the int8 dot products, 16 dimensions at a time for every row, so
  -- that the 16 query components stay in registers.
  local acc = {}
  for row = 1, rows do acc[row] = 0 end
  if not zeroq then
    for j = 1, chunks do
      local y1, y2, y3, y4, y5, y6, y7, y8 = Y1[j], Y2[j], Y3[j], Y4[j], Y5[j], Y6[j], Y7[j], Y8[j]
      local y9, y10, y11, y12, y13, y14, y15, y16 = Y9[j], Y10[j], Y11[j], Y12[j], Y13[j], Y14[j], Y15[j], Y16[j]
      local from = (j - 1) * 16 + 1
      local to = from + 15
      for row = 1, rows do
        local a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16 = sbyte(rq[row], from, to)
        acc[row] = acc[row] + a1 * y1 + a2 * y2 + a3 * y3 + a4 * y4 + a5 * y5 + a6 * y6 + a7 * y7 + a8 * y8
          + a9 * y9 + a10 * y10 + a11 * y11 + a12 * y12 + a13 * y13 + a14 * y14 + a15 * y15 + a16 * y16
      end
    end
  end

  -- Pass 1c: each item's bounds, from its best vector.
  for row = 1, rows do
    local a, e = 0, 0
    if not zeroq then
      a = (acc[row] - 128 * sumy) * rinv[row]
      e = rres[row] + slack
    end
    local i = ritem[row]
    if a - e > clb[i] then clb[i] = a - e end
    if a + e > cub[i] then cub[i] = a + e end
  end
  rq, acc = nil, nil

  local want = offset + limit
  local tau = -math.huge
  if n > want then
    local sorted = {}
    for i = 1, n do sorted[i] = clb[i] end
    table.sort(sorted)
    tau = sorted[n - want + 1]
  end

  local pow2 = {}
  for e = 1, 254 do pow2[e] = 2 ^ (e - 150) end
  local tiny = 2 ^ -149
  -- The float32 of four little-endian bytes (never NaN or infinite: Go refuses them).
  local function f32(b1, b2, b3, b4)
    local sign = 1
    if b4 >= 128 then
      sign = -1
      b4 = b4 - 128
    end
    local e = b4 * 2 + floor(b3 / 128)
    local m = (b3 % 128) * 65536 + b2 * 256 + b1
    if e == 0 then return sign * m * tiny end
    if e == 255 then return 0 end
    return sign * (m + 8388608) * pow2[e]
  end

  local picked = {}
  for i = 1, n do
    if cub[i] >= tau then
      local c, k = cc[i], ck[i]
      local r = redis.call('HMGET', itemkey(c, k), 'v', 'c', 'u', 't', 'n', 'w')
      local nv, w = tonumber(r[5]), r[6]
      local best = nil
      if zeroq then
        best = 0
      elseif nv and w and #w == nv * dims * 4 then
        local o = 0
        for _ = 1, nv do
          local dot, nx = 0, 0
          for d = 1, dims do
            local x = f32(sbyte(w, o + 1, o + 4))
            o = o + 4
            dot = dot + x * Y[d]
            nx = nx + x * x
          end
          local s = 0
          if nx > 0 then s = dot / math.sqrt(nx) end
          if not best or s > best then best = s end
        end
      end
      if best then picked[#picked + 1] = {best, tonumber(r[3]) or 0, c, cpos[i], k, r} end
    end
  end
  table.sort(picked, function(a, b)
    if a[1] ~= b[1] then return a[1] > b[1] end
    if a[2] ~= b[2] then return a[2] > b[2] end
    if a[3] ~= b[3] then return a[3] < b[3] end
    return a[4] < b[4]
  end)
  for i = offset + 1, math.min(#picked, want) do
    local p = picked[i]
    emit(p[3], p[5], p[6], string.format('%.17g', p[1]))
  end
end

-- Entries of expired items go, and so do namespaces left without items.
for _, s in ipairs(stale) do
  redis.call('ZREM', base .. 'n:' .. nsof[s[1]], s[2])
  redis.call('ZREM', base .. 'x:' .. nsof[s[1]], s[2])
end
for c in pairs(touched) do
  if redis.call('ZCARD', base .. 'n:' .. nsof[c]) == 0 then
    redis.call('ZREM', registry, regs[c])
    redis.call('ZREM', base .. 'exp', regs[c])
    redis.call('DEL', base .. 'x:' .. nsof[c])
  end
end
return out
