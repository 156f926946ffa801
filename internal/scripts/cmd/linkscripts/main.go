// Command linkscripts writes scripts.Source of each of scripts.SaverScripts
// into the directory -out, one file per script, byte for byte what Redis
// runs, and removes any other .lua file there. go generate ./internal/scripts
// runs it with -out internal/scripts/linked.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/graphstate/redcheck/internal/scripts"
)

func main() {
	out := flag.String("out", "", "directory to write the linked scripts into (created if missing)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: linkscripts -out DIR")
		os.Exit(2)
	}
	if err := link(*out); err != nil {
		fmt.Fprintln(os.Stderr, "linkscripts:", err)
		os.Exit(1)
	}
}

func link(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := scripts.SaverScripts()
	old, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if !slices.Contains(names, filepath.Base(f)) {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for _, name := range names {
		src, err := scripts.Source(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}
