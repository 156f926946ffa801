-- rekey.lua: replaces stored values by their re-encrypted form, each only where its field still holds the
-- exact bytes the caller read (compare-and-set), for redcheck rekey (docs/cli.md). A field that changed
-- since (a writer's newer value) or is gone (deleted, reclaimed, pruned) is left as it is: nothing is ever
-- created or overwritten that the caller did not read.
-- KEYS[1 ..] the hashes written: values hashes, checkpoint hashes, early-write hashes or store items, all
--            in one slot (one thread's shard, or one store)
-- ARGV[1] n, the number of replacements; ARGV[2 ..] n quadruples: the index in KEYS of the hash (1-based),
--         the field, the value read (expected), the value to write
-- Returns: {written, changed, gone}: how many fields were replaced, found holding other bytes, found absent.
-- Errors, before anything is written: "BADARGS ..." for a malformed call (a client bug).
-- Every comparison comes before the first write, so on a full Redis the call is refused whole (OOM) or
-- runs whole.
-- Work bound: O(n) HGET and HSET; the caller bounds n (at most 256) and the bytes it sends.
local n = tonumber(ARGV[1])
if not n or n < 0 or #ARGV ~= 1 + 4 * n then
  return redis.error_reply('BADARGS rekey: want n and n quadruples')
end
local todo = {}
local changed, gone = 0, 0
for i = 0, n - 1 do
  local at = 2 + 4 * i
  local key = KEYS[tonumber(ARGV[at])]
  if not key then return redis.error_reply('BADARGS rekey: no key ' .. ARGV[at]) end
  local cur = redis.call('HGET', key, ARGV[at + 1])
  if not cur then
    gone = gone + 1
  elseif cur ~= ARGV[at + 2] then
    changed = changed + 1
  else
    todo[#todo + 1] = {key, ARGV[at + 1], ARGV[at + 3]}
  end
end
for _, w in ipairs(todo) do
  redis.call('HSET', w[1], w[2], w[3])
end
return {#todo, changed, gone}
