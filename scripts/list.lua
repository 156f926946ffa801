-- list.lua: one page of checkpoints from one lex-ordered index, newest id first, filtered inside Redis.
-- KEYS[1] the index to walk (all members score 0, so ordered by bytes):
--         mode "ns":     index zset of a (thread, namespace); members are ids
--         mode "thread": index zset of a thread; members are id \0 namespace
--         mode "shard":  index zset of every checkpoint of a shard; members are id \0 thread \0 namespace
-- ARGV[1] mode: "ns", "thread" or "shard"
-- ARGV[2] base: mode ns: the namespace base; thread: the thread base; shard: the shard base
-- ARGV[3] max: ZREVRANGEBYLEX upper bound ("+", "(x" or "[x")
-- ARGV[4] min: ZREVRANGEBYLEX lower bound ("-", "(x" or "[x")
-- ARGV[5] page size: matches to return at most
-- ARGV[6] scan budget: index entries to examine at most
-- ARGV[7] "1" to return members only, "0" to return whole checkpoints
-- ARGV[8] mode shard only: "" for every namespace, or "=" .. encoded namespace to keep only that one
-- ARGV[9] n, the number of filter pairs that follow
-- ARGV[10 ..] filter pairs: metadata field ("m:" key), canonical JSON value
--            (a missing field counts as "null", so a null filter matches a missing key)
-- Returns: {last member examined, or "" when the index is exhausted; then one item per match:
--           the member (members only) or {member, flat checkpoint hash, channel values, parent's writes}}
local mode, base = ARGV[1], ARGV[2]
local page, budget, refs = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1'
local nsonly = ARGV[8]
local nf = tonumber(ARGV[9])
local ffields, fvalues = {'v'}, {}
for i = 0, nf - 1 do
  ffields[#ffields + 1] = ARGV[10 + 2 * i]
  fvalues[#fvalues + 1] = ARGV[11 + 2 * i]
end

-- Namespace base of a member and the id it names; nil for a member of a
-- namespace the query does not select.
local function locate(member)
  if mode == 'ns' then return base, member end
  local parts = split0(member)
  if mode == 'thread' then return base .. ':n:' .. parts[2], parts[1] end
  if nsonly ~= '' and '=' .. parts[3] ~= nsonly then return nil, nil end
  return base .. 't:' .. parts[2] .. ':n:' .. parts[3], parts[1]
end

-- The index is read in chunks: the first holds one page and one more entry
-- (enough when nothing is filtered out, and to tell whether more lie
-- beyond), each next one twice the last, up to the budget. Reading the whole
-- budget at once would cost a page of 10 the transfer of 1,024 members.
local out = {''}
local last = ''
local stale = {}
local examined = 0
local upper = ARGV[3]
local chunk = page + 1
local more = true -- the index may hold entries beyond the last examined
while more and examined < budget and #out - 1 < page do
  local want = math.min(chunk, budget - examined)
  local members = redis.call('ZREVRANGEBYLEX', KEYS[1], upper, ARGV[4], 'LIMIT', 0, want)
  more = #members == want
  for i, member in ipairs(members) do
    last = member
    examined = examined + 1
    local nsbase, id = locate(member)
    local cpkey, got = nil, {}
    if nsbase then
      cpkey = nsbase .. ':cp:' .. id
      got = redis.call('HMGET', cpkey, unpack(ffields))
    end
    if not cpkey then
      -- a namespace the query does not select: skipped, and not stale
    elseif not got[1] then
      stale[#stale + 1] = member
    else
      local ok = true
      for f = 1, nf do
        local v = got[f + 1]
        if not v then v = 'null' end
        if v ~= fvalues[f] then
          ok = false
          break
        end
      end
      if ok then
        if refs then
          out[#out + 1] = member
        else
          local cp = load_checkpoint(cpkey, nsbase .. ':blobs', nsbase)
          out[#out + 1] = {member, cp[1], cp[2], cp[3]}
        end
        if #out - 1 >= page then
          -- The page is full. Entries lie beyond if this chunk holds more;
          -- if it ended a full chunk, one more entry tells.
          if i < #members then
            more = true
          elseif more then
            more = #redis.call('ZREVRANGEBYLEX', KEYS[1], '(' .. member, ARGV[4], 'LIMIT', 0, 1) > 0
          end
          break
        end
      end
    end
  end
  upper = '(' .. last
  chunk = chunk * 2
end
if #stale > 0 then
  -- Entries of expired checkpoints go; in a shard index, so do registry
  -- entries of threads that expired whole.
  chunked('ZREM', KEYS[1], stale, 1000)
  if mode == 'shard' then
    for _, member in ipairs(stale) do
      local enct = split0(member)[2]
      if redis.call('EXISTS', base .. 't:' .. enct .. ':ns') == 0 then
        redis.call('ZREM', base .. 'threads', enct)
      end
    end
  end
end
-- Every entry examined: nothing lies beyond.
if not more then last = '' end
out[1] = last
return out
