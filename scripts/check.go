package scripts

// The scripts of the consistency check (redissaver's Check). They write
// nothing, and each reads one slot: a thread, or one page of a shard-wide
// index with what it names.
var (
	CheckThread = mustLoad("check_thread.lua")
	CheckShard  = mustLoad("check_shard.lua")
)
