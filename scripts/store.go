package scripts

// The scripts of the long-term memory store, package redisstore, each loaded
// from its file (lib.lua prepended). Every key they touch carries the store's
// hash tag; KEYS[1] is the store's namespace registry and names the slot.
var (
	// StoreWrite applies puts and deletes of items and sweeps index entries
	// of expired items.
	StoreWrite = mustLoad("store_write.lua")
	// StoreGet reads items by namespace and key.
	StoreGet = mustLoad("store_get.lua")
	// StoreSearch returns one page of the items under a namespace prefix,
	// filtered, newest first or ranked by cosine similarity.
	StoreSearch = mustLoad("store_search.lua")
	// StoreList returns one page of the namespaces of a store.
	StoreList = mustLoad("store_list.lua")
)
