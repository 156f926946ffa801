package scripts_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/internal/member"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/internal/scripts"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestHeaders: every file opens with a header naming its KEYS, its ARGV and
// what it returns.
func TestHeaders(t *testing.T) {
	files := scripts.Files()
	if len(files) < 2 {
		t.Fatalf("embedded files: %v", files)
	}
	for _, f := range files {
		h, err := scripts.Header(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"-- KEYS", "-- ARGV", "-- Returns:"} {
			if !strings.Contains(h, want) {
				t.Errorf("%s: header lacks %q:\n%s", f, want, h)
			}
		}
	}
}

// TestEveryFileRegistered: each .lua file but lib.lua is a script, and each
// script is a file.
func TestEveryFileRegistered(t *testing.T) {
	all := scriptrun.All()
	for _, f := range scripts.Files() {
		if f == "lib.lua" {
			continue
		}
		if all[f] == nil {
			t.Errorf("%s is embedded but not registered", f)
		}
	}
	if len(all) != len(scripts.Files())-1 {
		t.Errorf("%d scripts registered for %d files", len(all), len(scripts.Files()))
	}
}

// TestNoForbiddenLua: no cmsgpack, bit or struct (miniredis lacks them), no
// KEYS or SCAN, no global function definitions.
func TestNoForbiddenLua(t *testing.T) {
	forbidden := regexp.MustCompile(`cmsgpack|\bbit\.|\bstruct\.|'KEYS'|'SCAN'|"KEYS"|"SCAN"|^function `)
	for _, f := range scripts.Files() {
		src, err := scripts.Source(f)
		if f == "lib.lua" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(src, "\n") {
			if forbidden.MatchString(line) {
				t.Errorf("%s:%d: %s", f, i+1, line)
			}
		}
	}
}

// TestSourcePrelude: every script as Redis runs it reads KEYS and ARGV
// from locals, declared before its first helper, and no file declares them
// again.
func TestSourcePrelude(t *testing.T) {
	redeclared := regexp.MustCompile(`\blocal\s+(KEYS|ARGV)\b|^\s*local\s.*\b(KEYS|ARGV)\s*,?\s*=`)
	for _, f := range scripts.Files() {
		if f == "lib.lua" {
			continue
		}
		src, err := scripts.Source(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(src, "\n", 3)
		if len(lines) < 3 || !strings.HasPrefix(lines[1], "local KEYS, ARGV = KEYS, ARGV") {
			t.Errorf("%s: second line %q, want the prelude", f, lines[1])
		}
		for i, line := range strings.Split(lines[2], "\n") {
			if redeclared.MatchString(line) {
				t.Errorf("%s: line %d declares KEYS or ARGV again: %s", f, i+3, line)
			}
		}
	}
}

// TestScriptsLoad loads every script into miniredis and a real Redis.
func TestScriptsLoad(t *testing.T) {
	_, mini := redistest.Mini(t)
	for name, c := range map[string]*redis.Client{"miniredis": mini, "redis": redistest.Real(t)} {
		t.Run(name, func(t *testing.T) {
			for file, s := range scriptrun.All() {
				sha, err := s.Load(context.Background(), c).Result()
				if err != nil {
					t.Errorf("%s: %v", file, err)
					continue
				}
				if sha != s.Hash() {
					t.Errorf("%s: loaded as %s, want %s", file, sha, s.Hash())
				}
			}
		})
	}
}

// TestBlobFieldIsMemberBlob: lib.lua's blob_field writes a channel's length
// with decimal, which writes numbers below 100 itself (string.char, not
// Lua's number formatting): for every length around those bounds it names
// the field Go's member.Blob names.
func TestBlobFieldIsMemberBlob(t *testing.T) {
	lib, err := os.ReadFile("lib.lua")
	if err != nil {
		t.Fatal(err)
	}
	var fn []byte
	for _, name := range []string{"decimal", "blob_field"} {
		f := regexp.MustCompile(`(?ms)^local function ` + name + `\(.*?^end\n`).Find(lib)
		if f == nil {
			t.Fatalf("lib.lua has no %s", name)
		}
		fn = append(fn, f...)
	}
	var channels []string
	for _, n := range []int{1, 2, 9, 10, 11, 19, 20, 42, 90, 99, 100, 101, 255, 1000} {
		channels = append(channels, strings.Repeat("c", n))
	}
	src := string(fn) + "local out = {} for i, ch in ipairs(ARGV) do out[i] = blob_field(ch, '0001.ab') end return out"
	_, mini := redistest.Mini(t)
	for name, c := range map[string]*redis.Client{"miniredis": mini, "redis": redistest.Real(t)} {
		t.Run(name, func(t *testing.T) {
			args := make([]any, len(channels))
			for i, ch := range channels {
				args[i] = ch
			}
			got, err := c.Eval(context.Background(), src, nil, args...).StringSlice()
			if err != nil {
				t.Fatal(err)
			}
			for i, ch := range channels {
				if want := member.Blob(ch, "0001.ab"); i >= len(got) || got[i] != want {
					t.Errorf("blob_field of a channel of %d bytes: %q, want %q", len(ch), got, want)
				}
			}
		})
	}
}
