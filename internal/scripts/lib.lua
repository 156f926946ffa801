-- lib.lua: helpers shared by the saver's scripts; prepended to a script at load time
-- (only the helpers a script calls). Storage format 3: docs/storage-format.md.
-- KEYS: none (the helpers take key names from their callers)
-- ARGV: none
-- Returns: nothing; defines local functions only (Redis forbids globals in scripts).
-- Work bound: each helper's cost is stated beside it.

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

-- Scans a hash from cursor (HSCAN) until about count fields, or fields whose values hold 2 MiB, have been
-- read, whichever comes first: HSCAN's COUNT starts at 1 and doubles, at most to what the bytes left allow
-- at the largest value seen, so a page of large values ends early (the values hash of 1 MiB values: a few
-- per call, where a COUNT of 64 read 64 MiB into Lua). At most 12 HSCAN calls (a sparse hash can answer
-- pages with nothing in them). Returns the HSCAN reply's shape: {next cursor ("0" at the end), {field,
-- value, ...}}. O(count) fields, and about 2 MiB of values plus one HSCAN's.
local function hscan_bounded(key, cursor, count)
  local maxbytes = 2097152
  local out, n, bytes, largest, step, calls = {}, 0, 0, 1, 1, 0
  repeat
    calls = calls + 1
    local r = redis.call('HSCAN', key, cursor, 'COUNT', step)
    cursor = r[1]
    local page = r[2]
    for i = 1, #page, 2 do
      local size = #page[i + 1]
      out[#out + 1] = page[i]
      out[#out + 1] = page[i + 1]
      n = n + 1
      bytes = bytes + size
      if size > largest then largest = size end
    end
    step = math.min(step * 2, count - n, math.floor((maxbytes - bytes) / largest))
  until cursor == '0' or step < 1 or calls >= 12
  return {cursor, out}
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

-- Lets a script that frees memory run on a full Redis. Redis refuses a script's first write that may grow
-- memory (ZADD, SADD, XADD...) while it is over maxmemory, and no write after the script's first one; so a
-- script whose every write is checked beforehand is refused whole or runs whole. A script that deletes
-- (DeleteThread, Prune, DeleteForRuns, reclaim, Sweep) calls this first: its first write is then the DEL of
-- a key of its shard that never exists, which changes nothing and is not replicated, and what it adds while
-- it frees (a reclaim queue entry, a keep set, an event) is allowed. O(1).
local function may_run_full(sb)
  redis.call('DEL', sb .. 'never')
end

-- The error every read returns for data that should exist and does not.
local function dataloss(what)
  return redis.error_reply('DATALOSS ' .. what)
end

-- Checks a memory store's namespace registry (package redisstore): it holds its marker member "" from the
-- store's creation on (New writes it), and one without it was lost whole, with the namespaces it named.
-- Returns an error reply (DATALOSS) or nil. O(log n).
local function check_store_registry(registry)
  if redis.call('ZSCORE', registry, '') then return nil end
  return dataloss('namespace registry ' .. registry)
end

-- Judges a namespace its memory store's registry names (member) that was found without its index
-- {P}:n:NS: the scripts that empty one drop it from the registry at once, but for a Search step that
-- removed the entries of its expired items (an earlier version left it named, and {P}:exp names it then).
-- Returns an error reply (DATALOSS) for an index lost, nil for a namespace emptied. O(log n).
local function store_index_lost(base, member, ns)
  if redis.call('ZSCORE', base .. 'exp', member) then return nil end
  return dataloss('namespace index ' .. base .. 'n:' .. ns)
end

-- Judges an item of a memory store that its namespace's index names and whose hash {P}:i:NS:K is gone: it
-- expired when its expiry index {P}:x:NS says its time (now, a function giving the time in ms) has come,
-- else it was lost. Returns an error reply (DATALOSS) for an item lost, nil for one expired. O(log n).
local function store_item_lost(base, ns, k, now)
  local at = redis.call('ZSCORE', base .. 'x:' .. ns, k)
  if at and tonumber(at) <= now() then return nil end
  return dataloss('item hash ' .. base .. 'i:' .. ns .. ':' .. k)
end

-- Drops a namespace of a memory store (member: its registry member, ns: its encoded form) from the
-- registry and the expiry index once it holds no item. Returns whether it did. O(log n).
local function store_drop_if_empty(base, registry, member, ns)
  if redis.call('ZCARD', base .. 'n:' .. ns) ~= 0 then return false end
  redis.call('ZREM', registry, member)
  redis.call('ZREM', base .. 'exp', member)
  redis.call('DEL', base .. 'x:' .. ns)
  return true
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

-- Gives a sorted set Redis's skiplist encoding. A listpack inserts by a linear scan, about 450 instructions
-- per member up to its 128th, so an index that grows by one ID at each Put would pay that on every Put; a
-- skiplist costs about 830 bytes more for the set and about 90 more per member. A member too long for a
-- listpack, added and removed at once, converts the set, and Redis 7 does not convert a sorted set back when
-- members go (a restart that loads it does): 65 NUL bytes, longer than zset-max-listpack-value (64 by
-- default) and unlike any member of an index or registry (no checkpoint ID or encoded thread holds a NUL
-- byte). Nothing else changes: the member is gone before anyone reads. O(log n) for a skiplist; converting
-- a listpack is O(its members), at most zset-max-listpack-entries.
local function skiplist(key)
  local long = string.rep('\0', 65)
  redis.call('ZADD', key, '0', long)
  redis.call('ZREM', key, long)
end

-- Moves a thread's lease to now + ttl (ttl 0: no expiry) on its head and in the
-- registry. O(log threads).
local function touch(sb, enct, ttl, now)
  local exp = '0'
  if ttl > 0 then exp = string.format('%d', now + ttl) end -- formatted once, not by each redis.call
  redis.call('HSET', sb .. 't:' .. enct, 'exp', exp)
  redis.call('ZADD', sb .. 'threads', exp, enct)
end

-- Makes a thread's generation invisible at once: its head and registry entry go,
-- and the generation is queued for reclaim from time 'due'. O(log threads).
local function retire(sb, enct, gen, due)
  if gen then redis.call('ZADD', sb .. 'gc', due, enct .. '\0' .. gen) end
  redis.call('DEL', sb .. 't:' .. enct)
  redis.call('ZREM', sb .. 'threads', enct)
end

-- Deletes one checkpoint of a generation with its entries in every index. O(log n).
local function drop_checkpoint(sb, enct, encns, gen, id)
  local gb = sb .. 't:' .. enct .. ':g:' .. gen
  local nb = gb .. ':n:' .. encns
  local cp = nb .. ':cp:' .. id
  local member = id .. '\0' .. enct .. '\0' .. encns .. '\0' .. gen
  local run = redis.call('HGET', cp, 'r')
  if run then redis.call('SREM', run, member) end
  redis.call('ZREM', nb .. ':idx', id)
  redis.call('ZREM', gb .. ':idx', id .. '\0' .. encns)
  redis.call('ZREM', sb .. 'all', member)
  return redis.call('UNLINK', cp)
end

-- Reclaims up to budget units of work of one queued generation (a unit: one
-- checkpoint dropped, or one namespace's index and values unlinked; UNLINK frees
-- large values off the main thread). Returns the units used and whether the
-- generation is fully reclaimed (its queue entry is then removed). O(budget log n).
local function reclaim_gen(sb, entry, budget)
  local parts = split0(entry)
  local enct, gen = parts[1], parts[2]
  local gb = sb .. 't:' .. enct .. ':g:' .. gen
  local used = 0
  while used < budget do
    local encns = redis.call('SRANDMEMBER', gb .. ':ns')
    if encns then
      local nb = gb .. ':n:' .. encns
      local want = budget - used
      local ids = redis.call('ZRANGE', nb .. ':idx', 0, want - 1)
      for _, id in ipairs(ids) do drop_checkpoint(sb, enct, encns, gen, id) end
      used = used + #ids
      if #ids < want then
        redis.call('UNLINK', nb .. ':idx', nb .. ':blobs', nb .. ':keep', nb .. ':pkeep', nb .. ':need')
        redis.call('SREM', gb .. ':ns', encns)
        used = used + 1
      end
    else
      -- No namespace left: entries of the thread index whose namespace was lost.
      local want = math.max(budget - used, 1)
      local rest = redis.call('ZRANGE', gb .. ':idx', 0, want - 1)
      for _, m in ipairs(rest) do
        local p = split0(m)
        drop_checkpoint(sb, enct, p[2] or '', gen, p[1])
        redis.call('ZREM', gb .. ':idx', m)
      end
      used = used + #rest + 1
      if #rest < want then
        redis.call('UNLINK', gb .. ':idx', gb .. ':ns')
        redis.call('ZREM', sb .. 'gc', entry)
        return used, true
      end
    end
  end
  return used, false
end

-- The key of the pending writes a PutWrites stored before their checkpoint exists (put_writes.lua), and
-- the member of the shard's registry of such keys (sb .. 'early', score: the time from which they may be
-- reclaimed). O(1).
local function early_key(sb, enct, encns, id)
  return sb .. 't:' .. enct .. ':early:' .. encns .. ':' .. id
end

local function early_member(enct, encns, id)
  return enct .. '\0' .. encns .. '\0' .. id
end

-- Reclaims up to n early writes whose checkpoint never came and whose time (ms, a number or its decimal
-- string) has come, and returns how many. O(n log n).
local function reclaim_early(sb, n, now)
  local due = redis.call('ZRANGEBYSCORE', sb .. 'early', '-inf', now, 'LIMIT', '0', n)
  for _, m in ipairs(due) do
    local p = split0(m)
    redis.call('UNLINK', early_key(sb, p[1], p[2], p[3]))
    redis.call('ZREM', sb .. 'early', m)
  end
  return #due
end

-- Reclaims up to budget units from the generations of the shard's queue that are due
-- by now (ms: a number, or its decimal string, which spares Redis a conversion). Returns the units used and
-- whether due work remains. O(budget log n).
local function reclaim_due(sb, budget, now)
  local used = 0
  while used < budget do
    local due = redis.call('ZRANGEBYSCORE', sb .. 'gc', '-inf', now, 'LIMIT', '0', '1')
    if #due == 0 then return used, false end
    local u = reclaim_gen(sb, due[1], budget - used)
    used = used + u
  end
  return used, #redis.call('ZRANGEBYSCORE', sb .. 'gc', '-inf', now, 'LIMIT', '0', '1') > 0
end

-- Retires up to n threads of the shard whose lease ran out by now, and returns how many it retired. n and
-- now (ms) go to Redis as given: numbers, or decimal strings, which spare it a conversion.
-- O(n log threads).
local function retire_expired(sb, n, now)
  local expired = redis.call('ZRANGEBYSCORE', sb .. 'threads', '1', now, 'LIMIT', '0', n)
  for _, enct in ipairs(expired) do
    retire(sb, enct, redis.call('HGET', sb .. 't:' .. enct, 'g'), now)
  end
  return #expired
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

-- Appends one event, its field/value pairs given as the arguments after feedmaxlen (at most a few hundred
-- items: the caller bounds them; a table's or an ARGV span's passed by unpack, no table built for them), to
-- a thread's stream and to its shard's feed, each trimmed to about its maximum length (maxlen, feedmaxlen:
-- decimal strings, as event_bounds returns them: a Lua number passed to redis.call is formatted by Redis
-- with "%.17g", at a cost). A maxlen of "0" (as event_bounds returns it for any maxlen <= 0) means
-- publishing is off. Events are appended by the script that made the write they announce. O(#fields).
local function publish(stream, feed, maxlen, feedmaxlen, ...)
  if maxlen == '0' then return end
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', ...)
  redis.call('XADD', feed, 'MAXLEN', '~', feedmaxlen, '*', ...)
end

-- Reads the bounds of an event from ARGV at position i: the stream's maxlen and
-- the feed's, as the decimal strings received (publish passes them
-- to XADD as they are), but the stream's as "0", publishing off, for any number
-- <= 0, so that callers test it as a string (tonumber costs a strtod, about 1,300
-- instructions). A maxlen that is not a number raises an error, before the
-- script writes. O(1).
local function event_bounds(i)
  local maxlen = ARGV[i]
  if maxlen ~= '0' and tonumber(maxlen) <= 0 then maxlen = '0' end
  return maxlen, ARGV[i + 1]
end

-- Reads an event spec from ARGV at position i (maxlen, feed maxlen, n, then n
-- field/value pairs) without copying it: returns maxlen and feedmaxlen
-- (event_bounds), for publish, the positions of the first and last item of
-- the pairs, and the position after the spec. O(1).
local function event_span(i)
  local maxlen, feedmaxlen = event_bounds(i)
  local n = tonumber(ARGV[i + 2])
  return maxlen, feedmaxlen, i + 3, i + 2 + 2 * n, i + 3 + 2 * n
end

-- Reads an event spec from ARGV at position i: maxlen, feed maxlen, n, then n
-- field/value pairs. Returns maxlen and feedmaxlen (event_bounds), for publish,
-- the pairs and the position after the spec. O(n).
local function event_spec(i)
  local maxlen, feedmaxlen = event_bounds(i)
  local n = tonumber(ARGV[i + 2])
  local fields
  if n <= 1000 then
    fields = {unpack(ARGV, i + 3, i + 2 + 2 * n)} -- one table of the right size
  else
    fields = {}
    for j = i + 3, i + 2 + 2 * n do fields[#fields + 1] = ARGV[j] end
  end
  return maxlen, feedmaxlen, fields, i + 3 + 2 * n
end
