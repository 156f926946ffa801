package scripts

// linked/ holds the Source of each of SaverScripts, as Redis runs it, for the
// TypeScript saver: js/build/copy-scripts.mjs copies it into js/lua, so the
// npm package builds without Go and scripts.Source stays the one linker.
// TestLinkedUpToDate fails when linked/ differs from what this writes.
//go:generate go run ./cmd/linkscripts -out linked

// SaverScripts lists the scripts the TypeScript saver (js/) runs, the files
// go generate writes into linked/. store_*.lua and check_*.lua belong to
// other Go packages and have no TypeScript caller.
func SaverScripts() []string {
	return []string{
		"put.lua", "put_writes.lua", "get_tuple.lua", "list.lua", "delete_thread.lua", "delete_runs.lua",
		"prune.lua", "copy_read.lua", "copy_write.lua", "delta_history.lua", "sweep.lua", "blob_gc.lua",
	}
}
