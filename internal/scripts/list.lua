-- list.lua: one page of checkpoints from one lex-ordered index, newest id first, filtered inside Redis.
-- KEYS[1] mode "ns" or "thread": the thread head hash; mode "shard": the shard's index of every checkpoint
-- ARGV[1] mode: "ns" (members of the namespace index: ids), "thread" (members of the thread index:
--         id \0 namespace) or "shard" (members of the shard index: id \0 thread \0 namespace \0 generation)
-- ARGV[2] shard base "P:{N}:"
-- ARGV[3] modes ns and thread: encoded thread
-- ARGV[4] mode ns: encoded namespace
-- ARGV[5] modes ns and thread: the generation the previous page read, "" on the first page
-- ARGV[6] max: ZREVRANGEBYLEX upper bound ("+", "(x" or "[x")
-- ARGV[7] min: ZREVRANGEBYLEX lower bound ("-", "(x" or "[x")
-- ARGV[8] page size: matches to return at most
-- ARGV[9] scan budget: index entries to examine at most
-- ARGV[10] "1" to return members only, "0" to return whole checkpoints, "2" to return whole checkpoints
--         when their values hold at most 32 KiB (lib.lua's inline_bytes) and, for a larger page, each
--         checkpoint without its values (false in their place: the client reads them from the values hash
--         by plain HMGET, which keeps them out of Lua; docs/storage-format.md, "Values out of Lua")
-- ARGV[11] mode shard only: "" for every namespace, or "=" .. encoded namespace to keep only that one
-- ARGV[12] TTL in milliseconds to renew the lease of every thread returned with, 0 for none
-- ARGV[13] n, the number of filter pairs that follow
-- ARGV[14 ..] filter pairs: metadata field ("m:" key), canonical JSON value
--            (a missing field counts as "null", so a null filter matches a missing key)
-- Returns: {last member examined, or "" when the index is exhausted; the generation read (modes ns and
--           thread; "" for shard); then one item per match: the member (members only) or
--           {member, flat checkpoint hash, channel values (false: not read, ARGV[10] "2"), parent's writes}}.
--          A thread that is gone, expired, or whose generation changed since the previous page ends the
--          walk. Shard entries of generations no longer current (deleted or expired threads awaiting
--          reclaim) are skipped. "DATALOSS <what>" when an entry's checkpoint hash, a value, a thread head
--          or an index is missing (mode shard: the shard's index while its registry lists a thread, or
--          the registry's marker).
-- Work bound: at most ARGV[9] index entries, each O(log n + filter pairs), plus the page's checkpoints; a
--          page of whole checkpoints also ends once their values and hashes (pending writes, and the parent's
--          writes a legacy checkpoint carries) hold 4 MiB
--          (BYTES below: the first checkpoint always goes in), with the cursor where it stopped. With ARGV[10]
--          "2" the values count once per distinct value (HSTRLEN: what the client's HMGET reads), and at most
--          32 KiB of them enter Lua.
local mode, sb = ARGV[1], ARGV[2]
local page, budget, refs, auto = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10] == '1', ARGV[10] == '2'
local nsonly, ttl = ARGV[11], tonumber(ARGV[12])
local nf = tonumber(ARGV[13])
local ffields, fvalues = {'v'}, {}
for i = 0, nf - 1 do
  ffields[#ffields + 1] = ARGV[14 + 2 * i]
  fvalues[#fvalues + 1] = ARGV[15 + 2 * i]
end
local now = now_ms()

local index, genread, base = KEYS[1], '', nil
if mode ~= 'shard' then
  local gen, state, detail = thread_state(sb, ARGV[3], now, true)
  if state == 'lost' then return dataloss(detail) end
  if state ~= 'live' or (ARGV[5] ~= '' and ARGV[5] ~= gen) then return {'', ''} end
  genread = gen
  base = sb .. 't:' .. ARGV[3] .. ':g:' .. gen
  local lost = check_gen(base, mode == 'ns' and ARGV[4] or nil)
  if lost then return lost end
  if mode == 'ns' then
    base = base .. ':n:' .. ARGV[4]
    index = base .. ':idx'
  else
    index = base .. ':idx'
    if redis.call('EXISTS', index) == 0 then return dataloss('thread index ' .. index) end
  end
end

-- Threads met in shard mode: encoded thread -> current generation, or false when gone or expired.
local current = {}
local function thread_gen(enct)
  local g = current[enct]
  if g == nil then
    local gen, state, detail = thread_state(sb, enct, now, true)
    if state == 'lost' then return nil, detail end
    g = false
    if state == 'live' then g = gen end
    current[enct] = g
  end
  return g
end

-- Namespace base of a member and the id it names; nil for a member to skip; an error for a member of a
-- thread whose head is lost.
local function locate(member)
  if mode == 'ns' then return base, member end
  local parts = split0(member)
  if mode == 'thread' then return base .. ':n:' .. parts[2], parts[1] end
  if nsonly ~= '' and '=' .. parts[3] ~= nsonly then return nil end
  local g, lost = thread_gen(parts[2])
  if lost then return nil, nil, lost end
  if g ~= parts[4] then return nil end
  return sb .. 't:' .. parts[2] .. ':g:' .. g .. ':n:' .. parts[3], parts[1], nil, parts[2]
end

-- The index is read in chunks: the first holds one page and one more entry (enough when nothing is
-- filtered out, and to tell whether more lie beyond), each next one twice the last, up to the budget.
local out = {'', genread}
local last = ''
local examined = 0
-- The bytes of values and hashes a page of whole checkpoints reads at most before its last checkpoint: with
-- the page size, what bounds a call's time whatever the size of the values and pending writes.
local BYTES = 4194304
local bytes = 0
-- ARGV[10] "2": the bytes of the page's values (their sum over its checkpoints, as they would be
-- returned), which it returns only up to inline_bytes(); the sizes of the values met, by values hash,
-- "c:" field and version; each returned item's checkpoint hash and values hash.
local inline, sizes, cpkeys, blobkeys = 0, {}, {}, {}
local upper = ARGV[6]
local chunk = page + 1
local more = true -- the index may hold entries beyond the last examined
local renew = {}
while more and examined < budget and #out - 2 < page and bytes < BYTES do
  local want = math.min(chunk, budget - examined)
  local members = redis.call('ZREVRANGEBYLEX', index, upper, ARGV[7], 'LIMIT', '0', want)
  more = #members == want
  for i = 1, #members do
    local member = members[i]
    last = member
    examined = examined + 1
    local nb, id, lost, enct = locate(member)
    if lost then return dataloss(lost) end
    if nb then
      local cpkey = nb .. ':cp:' .. id
      local ok = true
      if nf > 0 or refs then
        -- Without filters, loading the checkpoint tells whether its hash exists.
        local got = redis.call('HMGET', cpkey, unpack(ffields))
        if not got[1] then return dataloss('checkpoint hash ' .. cpkey) end
        for f = 1, nf do
          local v = got[f + 1]
          if not v then v = 'null' end
          if v ~= fvalues[f] then
            ok = false
            break
          end
        end
      end
      if ok then
        if refs then
          out[#out + 1] = member
        elseif auto then
          local cp = read_checkpoint(cpkey, nb)
          if not cp then return dataloss('checkpoint hash ' .. cpkey) end
          local bk = nb .. ':blobs'
          local known = sizes[bk]
          if not known then
            known = {}
            sizes[bk] = known
          end
          local flat, cidx = cp[1], cp[2]
          for k = 1, #cidx do
            -- By "c:" field and version, so that a value met again builds no blob field.
            local i = cidx[k]
            local cf, ver = flat[i], flat[i + 1]
            local byver = known[cf]
            if not byver then
              byver = {}
              known[cf] = byver
            end
            local size = byver[ver]
            if not size then
              -- 0 for a value missing: the HMGET that reads it tells.
              size = redis.call('HSTRLEN', bk, blob_field(string.sub(cf, 3), ver))
              byver[ver] = size
              bytes = bytes + size
            end
            inline = inline + size
          end
          out[#out + 1] = {member, flat, cidx, cp[3]}
          cpkeys[#out], blobkeys[#out] = cpkey, bk
          for j = 2, #flat, 2 do bytes = bytes + #flat[j] end
          local extra = cp[3]
          for j = 2, #extra, 2 do bytes = bytes + #extra[j] end
        else
          local cp = load_checkpoint(cpkey, nb .. ':blobs', nb)
          if not cp then return dataloss('checkpoint hash ' .. cpkey) end
          if cp.err then return cp end
          out[#out + 1] = {member, cp[1], cp[2], cp[3]}
          for _, v in ipairs(cp[2]) do bytes = bytes + #v end
          for j = 2, #cp[1], 2 do bytes = bytes + #cp[1][j] end -- its pending writes, above all
          for j = 2, #cp[3], 2 do bytes = bytes + #cp[3][j] end -- its parent's writes (legacy only)
        end
        if enct then renew[enct] = true end
        if #out - 2 >= page or bytes >= BYTES then
          -- The page is full (or holds BYTES). Entries lie beyond if this chunk holds more; if it ended a
          -- full chunk, one more entry tells.
          if i < #members then
            more = true
          elseif more then
            more = #redis.call('ZREVRANGEBYLEX', index, '(' .. member, ARGV[7], 'LIMIT', '0', '1') > 0
          end
          break
        end
      end
    end
  end
  upper = '(' .. last
  chunk = chunk * 2
end
if auto then
  -- Items hold the indexes of their "c:" fields: the values in their place, or false for the client to
  -- read them.
  for i = 3, #out do
    local item = out[i]
    if inline <= inline_bytes() then
      local vals, lost = read_values(cpkeys[i], blobkeys[i], blob_fields(item[2], item[3]))
      if lost then return lost end
      item[3] = vals
    else
      item[3] = false
    end
  end
end
if ttl > 0 and #out > 2 then
  if mode ~= 'shard' then
    touch(sb, ARGV[3], ttl, now)
  else
    for enct in pairs(renew) do touch(sb, enct, ttl, now) end
  end
end
-- A shard index gone while the shard's registry lists a thread was lost (lost data, not an empty shard).
if mode == 'shard' and not more then
  local lost = check_shard_index(sb, nil)
  if lost then return lost end
end
-- Every entry examined: nothing lies beyond.
if not more then last = '' end
out[1] = last
return out
