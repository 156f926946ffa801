package scripts

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.lua
var files embed.FS

// lib is prepended to every script.
const libFile = "lib.lua"

// Source returns the source of a script as Redis runs it: the prelude,
// the helpers of lib.lua it calls (directly or through other helpers), in
// lib.lua's order, followed by the script's file. Only the helpers a script uses are
// included, because Redis runs the whole chunk on every call and each
// helper defined costs time.
func Source(name string) (string, error) {
	body, err := files.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("scripts: %w", err)
	}
	helpers, err := libHelpers()
	if err != nil {
		return "", err
	}
	used := map[string]bool{}
	var mark func(text string)
	mark = func(text string) {
		for _, h := range helpers {
			if !used[h.name] && callsHelper(text, h.name) {
				used[h.name] = true
				mark(h.text)
			}
		}
	}
	mark(string(body))
	var b strings.Builder
	b.WriteString("-- " + name + " (with the lib.lua helpers it uses)\n")
	b.WriteString(prelude)
	for _, h := range helpers {
		if used[h.name] {
			b.WriteString(h.text)
		}
	}
	b.Write(body)
	return b.String(), nil
}

// prelude opens every script, before its helpers: KEYS and ARGV as locals
// of the chunk (upvalues of the helpers), because each use of a global is a
// lookup in the globals table (put_writes.lua: 2.9K of 141K instructions
// per call, make bench-instructions).
const prelude = "local KEYS, ARGV = KEYS, ARGV -- locals: a global costs a table lookup at each use\n"

// helper is one function of lib.lua with the comment above it.
type helper struct{ name, text string }

// libHelpers splits lib.lua into its functions, each with the comment
// above it. A function starts at a line "local function NAME(" and ends at
// the first line "end" in column 0; lib.lua's header (its first comment
// block) belongs to no function.
func libHelpers() ([]helper, error) {
	lib, err := files.ReadFile(libFile)
	if err != nil {
		return nil, fmt.Errorf("scripts: %w", err)
	}
	var out []helper
	var pending strings.Builder // the comment above the next function
	inFunc, header := false, true
	for _, line := range strings.SplitAfter(string(lib), "\n") {
		switch {
		case inFunc:
			out[len(out)-1].text += line
			inFunc = strings.TrimRight(line, "\r\n") != "end"
		case strings.HasPrefix(line, "local function "):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "local function "), "(")
			out = append(out, helper{name: name, text: pending.String() + line})
			pending.Reset()
			inFunc, header = true, false
		case strings.HasPrefix(line, "--") && !header:
			pending.WriteString(line)
		case strings.TrimSpace(line) == "":
			header = false
			pending.Reset()
		}
	}
	if inFunc {
		return nil, fmt.Errorf("scripts: lib.lua: function %s has no closing end", out[len(out)-1].name)
	}
	return out, nil
}

// callsHelper reports whether text calls the function name.
func callsHelper(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name+"(")
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || !isIdent(text[at-1]) {
			return true
		}
		i = at + len(name)
	}
}

func isIdent(c byte) bool {
	return c == '_' || c == '.' || c == ':' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// Files lists the embedded .lua files, lib.lua included, sorted.
func Files() []string {
	names, _ := fs.Glob(files, "*.lua")
	sort.Strings(names)
	return names
}

// Header returns the leading comment block of an embedded file.
func Header(name string) (string, error) {
	body, err := files.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("scripts: %w", err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "--") {
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), nil
}
