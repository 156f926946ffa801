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
	// StoreScan runs one bounded step of a walk over the items under a
	// namespace prefix, for Search.
	StoreScan = mustLoad("store_scan.lua")
	// StoreList runs one bounded step of a walk over the namespaces of a
	// store, for ListNamespaces.
	StoreList = mustLoad("store_list.lua")
)
