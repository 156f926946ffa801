package scriptrun

import (
	"maps"

	"github.com/graphstate/redcheck/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// The scripts, each from its file in scripts/ with the lib.lua helpers it
// calls (scripts.Source). Package scripts exports the sources only (what a
// client in another language reads); these are the Go runner's.
var (
	Put          = load("put.lua")
	PutWrites    = load("put_writes.lua")
	GetTuple     = load("get_tuple.lua")
	List         = load("list.lua")
	DeleteThread = load("delete_thread.lua")
	DeleteRuns   = load("delete_runs.lua")
	Prune        = load("prune.lua")
	CopyRead     = load("copy_read.lua")
	CopyWrite    = load("copy_write.lua")
	DeltaHistory = load("delta_history.lua")
	Sweep        = load("sweep.lua")
	BlobGC       = load("blob_gc.lua")
	CheckThread  = load("check_thread.lua")
	CheckShard   = load("check_shard.lua")
	// Rekey replaces values by their re-encrypted form, compare-and-set
	// (redcheck rekey).
	Rekey = load("rekey.lua")

	// The store's: writes, reads by key, one step of a walk over items
	// (Search), one step of a walk over namespaces (ListNamespaces).
	StoreWrite = load("store_write.lua")
	StoreGet   = load("store_get.lua")
	StoreScan  = load("store_scan.lua")
	StoreList  = load("store_list.lua")
)

var registry = map[string]*redis.Script{}

func load(name string) *redis.Script {
	src, err := scripts.Source(name)
	if err != nil {
		panic(err) // the files are embedded: a missing one is a build defect
	}
	s := redis.NewScript(src)
	registry[name] = s
	return s
}

// All returns every script by file name (lib.lua excepted), as a new map.
func All() map[string]*redis.Script { return maps.Clone(registry) }
