-- list.lua (with the lib.lua helpers it uses)
local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use
-- Calls cmd on key with the first n items of list (all of them when n is nil) as arguments, at most step
-- at a time (Lua's unpack is limited to a few thousand values), and concatenates table replies. O(n).
local function chunked(cmd, key, list, step, n)
  n = n or #list
  if n <= step then return redis.call(cmd, key, unpack(list, 1, n)) end
  local out = {}
  for i = 1, n, step do
    local last = math.min(i + step - 1, n)
    local r = redis.call(cmd, key, unpack(list, i, last))
    if type(r) == 'table' then
      for j = 1, #r do out[#out + 1] = r[j] end
    end
  end
  return out
end
-- Splits s on the byte "\0" (binary safe). O(#s).
local function split0(s)
  local out, from = {}, 1
  while true do
    local at = string.find(s, '\0', from, true)
    if not at then
      out[#out + 1] = string.sub(s, from)
      return out
    end
    out[#out + 1] = string.sub(s, from, at - 1)
    from = at + 1
  end
end
-- n, an integer >= 0, in decimal. Below 100 by string.char: Lua writes a number with sprintf("%.14g"),
-- which costs more than the rest of most callers (a blob field, an event field). O(1).
local function decimal(n)
  if n < 10 then return string.char(48 + n) end
  if n < 100 then
    local u = n % 10
    return string.char(48 + (n - u) / 10, 48 + u)
  end
  return string.format('%d', n)
end
-- The blob field of a channel version: len(channel) ":" channel version. O(1).
local function blob_field(channel, version)
  return decimal(string.len(channel)) .. ':' .. channel .. version
end
-- The error every read returns for data that should exist and does not.
local function dataloss(what)
  return redis.error_reply('DATALOSS ' .. what)
end
-- The server's clock in Unix milliseconds. O(1).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- The state of a thread from its head hash and its registry entry. O(log threads). now is the time
-- in ms, or a function giving it (called only when needed). With reading, a thread whose head exists
-- is judged from its head alone. head, when given, is the head's key (a script's KEYS[1]: not built again).
-- Returns gen (or nil), state, detail: state is
--   'live'    the thread exists: gen is its generation;
--   'none'    no such thread;
--   'expired' its lease ran out: readers see no thread, writers start a new generation
--             (gen, when the head still exists, is the generation to retire);
--   'lost'    its head or its registry entry is missing while the other exists, or the
--             shard's registry lost its marker member "" (the whole zset was lost): detail
--             names the missing key.
local function thread_state(sb, enct, now, reading, head)
  head = head or sb .. 't:' .. enct
  local h = redis.call('HMGET', head, 'g', 'exp')
  if h[1] and reading then
    -- A read's answer does not depend on the registry entry (an index for listings and sweeps):
    -- reads skip it; writes and the check see its loss. A thread without a lease ("0", or no field)
    -- costs no tonumber.
    local x = h[2]
    local e = x and x ~= '0' and tonumber(x) or 0
    if e > 0 then
      if type(now) == 'function' then now = now() end
      if e <= now then return h[1], 'expired' end
    end
    return h[1], 'live'
  end
  if type(now) == 'function' then now = now() end
  local reg = redis.call('ZSCORE', sb .. 'threads', enct)
  if not h[1] then
    if not reg then
      -- The registry holds the marker member "" from the prefix's creation on (no thread is ""): a
      -- registry without it was lost whole, with the entries of threads that may exist.
      if not redis.call('ZSCORE', sb .. 'threads', '') then return nil, 'lost', 'thread registry ' .. sb .. 'threads' end
      return nil, 'none'
    end
    local e = tonumber(reg)
    if e > 0 and e <= now then return nil, 'expired' end
    return nil, 'lost', 'thread head ' .. head
  end
  local e = tonumber(h[2]) or 0
  if e > 0 and e <= now then return h[1], 'expired' end
  if not reg then return h[1], 'lost', 'registry entry of ' .. head .. ' in ' .. sb .. 'threads' end
  return h[1], 'live'
end
-- Checks what every live generation has: its namespace set, and the index of a
-- namespace the set names (encns may be nil: the set only). Returns an error reply
-- (DATALOSS) or nil. O(1).
local function check_gen(gb, encns)
  if not encns then
    if redis.call('EXISTS', gb .. ':ns') == 0 then return dataloss('namespace set ' .. gb .. ':ns') end
    return nil
  end
  local idx = gb .. ':n:' .. encns .. ':idx'
  if redis.call('EXISTS', gb .. ':ns', idx) == 2 then return nil end -- the usual case, one call
  if redis.call('EXISTS', gb .. ':ns') == 0 then return dataloss('namespace set ' .. gb .. ':ns') end
  if redis.call('SISMEMBER', gb .. ':ns', encns) == 1 then return dataloss('namespace index ' .. idx) end
  return nil
end
-- Checks the shard's index of every checkpoint (sb .. 'all'), which no reader can tell lost from empty by
-- itself: every thread the shard's registry lists has a checkpoint, so an entry in it (a thread left
-- without checkpoints leaves the registry). Gone while the registry lists a thread other than enct (nil:
-- none to leave out), it was lost; so was a registry without its marker member "". Returns an error reply
-- (DATALOSS), or nil and whether the index exists. O(1), and O(log threads) when the index is gone.
local function check_shard_index(sb, enct)
  if redis.call('EXISTS', sb .. 'all') == 1 then return nil, true end
  local registry = sb .. 'threads'
  local registered = redis.call('ZCARD', registry)
  if registered == 0 then return dataloss('thread registry ' .. registry) end
  if enct and redis.call('ZSCORE', registry, enct) then registered = registered - 1 end
  if registered > 1 then return dataloss('shard index ' .. sb .. 'all') end
  return nil, false
end
-- Moves a thread's lease to now + ttl (ttl 0: no expiry) on its head and in the
-- registry. O(log threads).
local function touch(sb, enct, ttl, now)
  local exp = '0'
  if ttl > 0 then exp = string.format('%d', now + ttl) end -- formatted once, not by each redis.call
  redis.call('HSET', sb .. 't:' .. enct, 'exp', exp)
  redis.call('ZADD', sb .. 'threads', exp, enct)
end
-- Reads one checkpoint hash without its values. Returns nil when the hash does not exist, else
-- {flat HGETALL reply, the indexes in flat of its "c:" fields in their order, parent's "w:" fields}.
-- The parent's writes are read only for legacy checkpoints (v < 4) with a parent,
-- whose pending sends live in the parent's writes. O(fields of the checkpoint).
local function read_checkpoint(cpkey, nb)
  local flat = redis.call('HGETALL', cpkey)
  if #flat == 0 then return nil end
  local cidx, nc, v, p = {}, 0, nil, nil
  local byte = string.byte
  for i = 1, #flat, 2 do
    local f = flat[i]
    local b1, b2 = byte(f, 1, 2)
    if b2 == 58 and b1 == 99 then -- "c:"
      nc = nc + 1
      cidx[nc] = i
    elseif f == 'v' then
      v = tonumber(flat[i + 1])
    elseif f == 'p' then
      p = flat[i + 1]
    end
  end
  local extra = {}
  if v and v < 4 and p then
    local pf = redis.call('HGETALL', nb .. ':cp:' .. p)
    for i = 1, #pf, 2 do
      if string.sub(pf[i], 1, 2) == 'w:' then
        extra[#extra + 1] = pf[i]
        extra[#extra + 1] = pf[i + 1]
      end
    end
  end
  return {flat, cidx, extra}
end
-- The blob fields of a checkpoint read by read_checkpoint (flat, cidx: its hash and the indexes of its
-- "c:" fields), in order. O(#cidx).
local function blob_fields(flat, cidx)
  local fields, sub = {}, string.sub
  for j = 1, #cidx do
    local i = cidx[j]
    fields[j] = blob_field(sub(flat[i], 3), flat[i + 1])
  end
  return fields
end
-- The bytes of values up to which a read returns them itself (32 KiB). Beyond, entering Lua (Redis hashes
-- every string a script reads or returns, about 1.3 ns per byte each way) costs Redis more than a second
-- round trip costs the client, which then reads them by plain HMGET (docs/storage-format.md, "Values out
-- of Lua"). O(1).
local function inline_bytes()
  return 32768
end
-- Reads the values blobkey holds under fields (blob_fields of the checkpoint cpkey), in order. Returns
-- them, or nil and an error reply (DATALOSS) when one is missing. O(#fields).
local function read_values(cpkey, blobkey, fields)
  if #fields == 0 then return {} end
  local blobs = chunked('HMGET', blobkey, fields, 1000)
  for i = 1, #blobs do
    if not blobs[i] then
      return nil, dataloss('value ' .. fields[i] .. ' of ' .. cpkey .. ' in ' .. blobkey)
    end
  end
  return blobs
end
-- Loads one checkpoint hash with the channel values its versions point to.
-- Returns nil when the hash does not exist, else
-- {flat HGETALL reply, values aligned with its "c:" fields, parent's "w:" fields} (read_checkpoint),
-- or an error reply (DATALOSS) when a value it points to is missing. O(fields of the checkpoint).
local function load_checkpoint(cpkey, blobkey, nb)
  local cp = read_checkpoint(cpkey, nb)
  if not cp then return nil end
  local blobs, lost = read_values(cpkey, blobkey, blob_fields(cp[1], cp[2]))
  if lost then return lost end
  cp[2] = blobs
  return cp
end
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
