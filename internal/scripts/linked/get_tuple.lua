-- get_tuple.lua (with the lib.lua helpers it uses)
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
-- A function giving the server's clock in Unix milliseconds, read at its first
-- call only (scripts that need it only for a lease read TIME only then). O(1).
local function lazy_clock()
  local clock
  return function()
    if not clock then clock = now_ms() end
    return clock
  end
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
-- Whether the values blobkey holds under fields hold more than inline_bytes() in all: their sizes by
-- HSTRLEN (0 for a value missing: the read that follows tells), never their bytes. O(#fields).
local function values_large(blobkey, fields)
  local size, limit = 0, inline_bytes()
  for _, f in ipairs(fields) do
    size = size + redis.call('HSTRLEN', blobkey, f)
    if size > limit then return true end
  end
  return false
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
-- get_tuple.lua: reads one checkpoint (by id, or the latest of its namespace) with its values and writes.
-- KEYS[1] thread head hash
-- KEYS[2] thread registry zset of the shard
-- ARGV[1] shard base "P:{N}:"
-- ARGV[2] encoded thread
-- ARGV[3] encoded namespace
-- ARGV[4] checkpoint id, or "" for the latest
-- ARGV[5] TTL in milliseconds to renew the thread's lease with, 0 for no renewal
-- ARGV[6] (optional) "1" to leave the values out when they hold more than 32 KiB (lib.lua's inline_bytes):
--         false in their place, the client reads them by plain HMGET (docs/storage-format.md, "Values out of
--         Lua")
-- Returns: nil when there is no such checkpoint (or its thread expired), else
--          {id, flat checkpoint hash, channel values aligned with its "c:" fields, parent's writes (legacy only),
--          the thread's generation}.
--          With ARGV[6] "1", the values are false when they hold more than 32 KiB.
--          The error "DATALOSS <what>" when something the answer needs is missing: the thread's head (its
--          registry entry alone is an index the answer does not need: Put and the check report its loss),
--          an indexed checkpoint's hash, a value a channel version points to, the namespace
--          index of a namespace the thread lists.
-- Work bound: O(fields of the checkpoint) + O(log n); with ARGV[6] "1", at most 32 KiB of values enter Lua.
local sb, enct, encns, id, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
-- The clock is read only when needed (a lease to check or renew).
local now = lazy_clock()
local gen, state, detail = thread_state(sb, enct, now, true, KEYS[1])
if state == 'lost' then return dataloss(detail) end
if state ~= 'live' then return nil end
local gb = sb .. 't:' .. enct .. ':g:' .. gen
local nb = gb .. ':n:' .. encns
local idx = nb .. ':idx'
local lost = check_gen(gb, encns)
if lost then return lost end
if id == '' then
  local top = redis.call('ZREVRANGE', idx, '0', '0')
  if #top == 0 then return nil end
  id = top[1]
end
local cpkey = nb .. ':cp:' .. id
local found = read_checkpoint(cpkey, nb)
if not found then
  -- No such checkpoint, or its hash was lost: the index tells.
  if redis.call('ZSCORE', idx, id) then return dataloss('checkpoint hash ' .. cpkey) end
  return nil
end
local blobkey = nb .. ':blobs'
local fields = blob_fields(found[1], found[2])
local values = false
if ARGV[6] ~= '1' or not values_large(blobkey, fields) then
  local lost
  values, lost = read_values(cpkey, blobkey, fields)
  if lost then return lost end
end
if ttl > 0 then touch(sb, enct, ttl, now()) end
return {id, found[1], values, found[3], gen}
