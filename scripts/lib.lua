-- lib.lua: helpers shared by every script; prepended to each script at load time.
-- KEYS: none (the helpers take key names from their callers)
-- ARGV: none
-- Returns: nothing; defines local functions only (Redis forbids globals in scripts).

-- Calls cmd on key with the items of list as arguments, at most step at a time
-- (Lua's unpack has a small limit), and concatenates table replies.
local function chunked(cmd, key, list, step)
  if #list <= step then return redis.call(cmd, key, unpack(list)) end
  local out = {}
  for i = 1, #list, step do
    local last = math.min(i + step - 1, #list)
    local r = redis.call(cmd, key, unpack(list, i, last))
    if type(r) == 'table' then
      for j = 1, #r do out[#out + 1] = r[j] end
    end
  end
  return out
end

-- Sets a TTL in milliseconds on every key of keys; ttl 0 means keep forever.
local function expire_all(ttl, keys)
  if ttl > 0 then
    for i = 1, #keys do redis.call('PEXPIRE', keys[i], ttl) end
  end
end

-- Splits s on the byte "\0" (binary safe).
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

-- The blob field of a channel version: len(channel) ":" channel version.
local function blob_field(channel, version)
  return string.len(channel) .. ':' .. channel .. version
end

-- Loads one checkpoint hash with the channel values its versions point to.
-- Returns nil when the checkpoint does not exist, else
-- {flat HGETALL reply, values aligned with its "c:" fields, parent's "w:" fields}.
-- The parent's writes are read only for legacy checkpoints (v < 4) with a parent,
-- whose pending sends live in the parent's writes.
local function load_checkpoint(cpkey, blobkey, nsbase)
  local flat = redis.call('HGETALL', cpkey)
  if #flat == 0 then return nil end
  local fields, v, p = {}, nil, nil
  for i = 1, #flat, 2 do
    local f = flat[i]
    local kind = string.sub(f, 1, 2)
    if kind == 'c:' then
      fields[#fields + 1] = blob_field(string.sub(f, 3), flat[i + 1])
    elseif f == 'v' then
      v = tonumber(flat[i + 1])
    elseif f == 'p' then
      p = flat[i + 1]
    end
  end
  local blobs = {}
  if #fields > 0 then blobs = chunked('HMGET', blobkey, fields, 1000) end
  local extra = {}
  if v and v < 4 and p then
    local pf = redis.call('HGETALL', nsbase .. ':cp:' .. p)
    for i = 1, #pf, 2 do
      if string.sub(pf[i], 1, 2) == 'w:' then
        extra[#extra + 1] = pf[i]
        extra[#extra + 1] = pf[i + 1]
      end
    end
  end
  return {flat, blobs, extra}
end

-- Removes the values no checkpoint of a namespace points to any more, drops
-- index entries of expired checkpoints, and removes the namespace (and the
-- thread) from the indexes once it holds no checkpoint.
local function collect_namespace(shardbase, enct, encns)
  local tbase = shardbase .. 't:' .. enct
  local nsbase = tbase .. ':n:' .. encns
  local keep, live, gone = {}, 0, {}
  for _, id in ipairs(redis.call('ZRANGE', nsbase .. ':idx', 0, -1)) do
    local flat = redis.call('HGETALL', nsbase .. ':cp:' .. id)
    if #flat == 0 then
      gone[#gone + 1] = id
    else
      live = live + 1
      for i = 1, #flat, 2 do
        if string.sub(flat[i], 1, 2) == 'c:' then
          keep[blob_field(string.sub(flat[i], 3), flat[i + 1])] = true
        end
      end
    end
  end
  for _, id in ipairs(gone) do
    redis.call('ZREM', nsbase .. ':idx', id)
    redis.call('ZREM', tbase .. ':idx', id .. '\0' .. encns)
    redis.call('ZREM', shardbase .. 'all', id .. '\0' .. enct .. '\0' .. encns)
  end
  local drop = {}
  for _, f in ipairs(redis.call('HKEYS', nsbase .. ':blobs')) do
    if not keep[f] then drop[#drop + 1] = f end
  end
  if #drop > 0 then chunked('HDEL', nsbase .. ':blobs', drop, 1000) end
  if live == 0 then
    redis.call('DEL', nsbase .. ':idx', nsbase .. ':blobs')
    redis.call('SREM', tbase .. ':ns', encns)
    if redis.call('SCARD', tbase .. ':ns') == 0 then
      redis.call('DEL', tbase .. ':ns', tbase .. ':idx')
      redis.call('ZREM', shardbase .. 'threads', enct)
    end
  end
end

-- Deletes one checkpoint hash and its entries in the indexes and its run index.
local function drop_checkpoint(shardbase, enct, encns, id)
  local tbase = shardbase .. 't:' .. enct
  local nsbase = tbase .. ':n:' .. encns
  local cp = nsbase .. ':cp:' .. id
  local member = id .. '\0' .. enct .. '\0' .. encns
  local run = redis.call('HGET', cp, 'r')
  if run then redis.call('SREM', run, member) end
  redis.call('ZREM', nsbase .. ':idx', id)
  redis.call('ZREM', tbase .. ':idx', id .. '\0' .. encns)
  redis.call('ZREM', shardbase .. 'all', member)
  return redis.call('DEL', cp)
end

-- Appends one event (a flat field, value list) to a thread's stream and to
-- its shard's feed, each trimmed to about its maximum length. A maxlen of 0
-- means publishing is off. Events are appended by the script that made the
-- write they announce, so an event exists if and only if its write happened.
local function publish(stream, feed, maxlen, feedmaxlen, fields)
  if maxlen <= 0 then return end
  redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', unpack(fields))
  redis.call('XADD', feed, 'MAXLEN', '~', feedmaxlen, '*', unpack(fields))
end

-- Reads an event spec from ARGV at position i: maxlen, feed maxlen, n, then n
-- field/value pairs. Returns maxlen, feedmaxlen, the pairs and the position
-- after the spec.
local function event_spec(i)
  local maxlen, feedmaxlen, n = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local fields = {}
  for j = i + 3, i + 2 + 2 * n do fields[#fields + 1] = ARGV[j] end
  return maxlen, feedmaxlen, fields, i + 3 + 2 * n
end
