// Package formatvec holds what the storage-format test vectors
// (testdata/format at the repository root, described in
// docs/storage-format.md) share between the packages that check them: the
// typed value notation with which the vectors give Go values, the form of a
// byte string, and Check, which compares a generated vector file with the
// stored one byte for byte, or rewrites it when the environment variable
// REDCHECK_UPDATE_VECTORS is 1.
//
// It is test infrastructure: only tests import it.
package formatvec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/graphstate/redcheck/checkpoint"
)

// UpdateEnv is the environment variable that makes Check rewrite the files.
const UpdateEnv = "REDCHECK_UPDATE_VECTORS"

// Dir returns testdata/format of the repository: the first directory up from
// the working directory that holds go.mod, joined with testdata/format.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "format")
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("formatvec: no go.mod above the working directory")
		}
		dir = up
	}
}

// Marshal encodes doc as the vector files are written: indented by two
// spaces, no HTML escaping, object keys in struct order (maps sorted), one
// final newline. Its output is a function of doc alone.
func Marshal(doc any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Check compares the vector file name (in Dir) with doc, as Marshal writes
// it, and fails t at the first line that differs. With REDCHECK_UPDATE_VECTORS=1
// it writes the file instead.
func Check(t testing.TB, name string, doc any) {
	t.Helper()
	want, err := Marshal(doc)
	if err != nil {
		t.Fatalf("formatvec: encode %s: %v", name, err)
	}
	path := filepath.Join(Dir(t), name)
	if os.Getenv(UpdateEnv) == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("formatvec: wrote %s (%d bytes)", path, len(want))
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("formatvec: %v (regenerate with %s=1)", err, UpdateEnv)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("formatvec: %s differs from the implementation at line %d:\n file: %s\n code: %s\n(if the format changed on purpose, regenerate with %s=1, bump the format version and say so in docs/storage-format.md)",
				name, i+1, g, w, UpdateEnv)
		}
	}
	t.Fatalf("formatvec: %s differs from the implementation", name)
}

// Load decodes the vector file name (in Dir) into v.
func Load(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("formatvec: %s: %v", name, err)
	}
}

// Text returns s when it is valid UTF-8 (so that JSON can carry it
// unchanged), nil otherwise.
func Text(s string) *string {
	if !utf8.ValidString(s) {
		return nil
	}
	return &s
}

// Hex returns the lower-case hex of the bytes of s.
func Hex(s string) string { return hex.EncodeToString([]byte(s)) }

// Unhex reverses Hex.
func Unhex(t testing.TB, h string) string {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("formatvec: bad hex %q: %v", h, err)
	}
	return string(b)
}

// Bin is a byte string that may hold any byte: as text when it is valid
// UTF-8, and always as hex.
type Bin struct {
	Text *string `json:"text,omitempty"`
	Hex  string  `json:"hex"`
}

// B returns the Bin of s.
func B(s string) Bin { return Bin{Text: Text(s), Hex: Hex(s)} }

// Bins returns the Bin of each string.
func Bins(ss []string) []Bin {
	out := make([]Bin, len(ss))
	for i, s := range ss {
		out[i] = B(s)
	}
	return out
}

// Pair is one field/value pair of a hash or a stream entry.
type Pair struct {
	Field    *string `json:"field,omitempty"`
	FieldHex string  `json:"field_hex"`
	Value    *string `json:"value,omitempty"`
	ValueHex string  `json:"value_hex"`
}

// Pairs turns a flat field, value, field, value... list into pairs sorted by
// the bytes of their fields (then of their values).
func Pairs(flat []string) []Pair {
	type kv struct{ k, v string }
	kvs := make([]kv, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		kvs = append(kvs, kv{flat[i], flat[i+1]})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].k != kvs[j].k {
			return kvs[i].k < kvs[j].k
		}
		return kvs[i].v < kvs[j].v
	})
	out := make([]Pair, len(kvs))
	for i, p := range kvs {
		out[i] = Pair{Field: Text(p.k), FieldHex: Hex(p.k), Value: Text(p.v), ValueHex: Hex(p.v)}
	}
	return out
}

// Value is the typed notation with which the vectors give a value: exactly
// one member is set. Integers are decimal strings (int64 or uint64, exact in
// every language), floats JSON numbers (finite float64), strings text (str,
// valid UTF-8) or hex (str_hex, any bytes), byte strings hex, lists and maps
// (string keys) of typed values, and delta a checkpoint.DeltaSnapshot of a
// typed value.
type Value struct {
	Null     bool              `json:"null,omitempty"`
	Bool     *bool             `json:"bool,omitempty"`
	Int      string            `json:"int,omitempty"`
	Uint     string            `json:"uint,omitempty"`
	Float    *float64          `json:"float,omitempty"`
	Str      *string           `json:"str,omitempty"`
	StrHex   string            `json:"str_hex,omitempty"`
	BytesHex *string           `json:"bytes_hex,omitempty"`
	List     *[]Value          `json:"list,omitempty"`
	Map      *map[string]Value `json:"map,omitempty"`
	Delta    *Value            `json:"delta,omitempty"`
}

// Constructors of typed values.
func Null() Value           { return Value{Null: true} }
func Bool(b bool) Value     { return Value{Bool: &b} }
func Int(i int64) Value     { return Value{Int: strconv.FormatInt(i, 10)} }
func Uint(u uint64) Value   { return Value{Uint: strconv.FormatUint(u, 10)} }
func Float(f float64) Value { return Value{Float: &f} }
func Str(s string) Value    { return Value{Str: &s} }
func StrHex(s string) Value { return Value{StrHex: Hex(s)} }
func Bytes(b []byte) Value  { h := hex.EncodeToString(b); return Value{BytesHex: &h} }
func List(vs ...Value) Value {
	if vs == nil {
		vs = []Value{} // "list": [], not null
	}
	return Value{List: &vs}
}
func Delta(v Value) Value { return Value{Delta: &v} }

// Map returns a map of typed values from key, value, key, value...
func Map(kv ...any) Value {
	m := make(map[string]Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(Value)
	}
	return Value{Map: &m}
}

// Go returns the Go value v stands for: nil, bool, int64, uint64, float64,
// string, []byte, []any, map[string]any or checkpoint.DeltaSnapshot.
func (v Value) Go() (any, error) {
	switch {
	case v.Null:
		return nil, nil
	case v.Bool != nil:
		return *v.Bool, nil
	case v.Int != "":
		return strconv.ParseInt(v.Int, 10, 64)
	case v.Uint != "":
		return strconv.ParseUint(v.Uint, 10, 64)
	case v.Float != nil:
		return *v.Float, nil
	case v.Str != nil:
		return *v.Str, nil
	case v.StrHex != "":
		b, err := hex.DecodeString(v.StrHex)
		return string(b), err
	case v.BytesHex != nil:
		return hex.DecodeString(*v.BytesHex)
	case v.List != nil:
		out := make([]any, len(*v.List))
		for i, e := range *v.List {
			g, err := e.Go()
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case v.Map != nil:
		out := make(map[string]any, len(*v.Map))
		for k, e := range *v.Map {
			g, err := e.Go()
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	case v.Delta != nil:
		g, err := v.Delta.Go()
		return checkpoint.DeltaSnapshot{Value: g}, err
	}
	return nil, fmt.Errorf("formatvec: empty typed value")
}

// MustGo is Go for values built in a test: it fails t on error.
func (v Value) MustGo(t testing.TB) any {
	t.Helper()
	g, err := v.Go()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
