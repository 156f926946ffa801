package canonjson

import (
	"encoding/json"
	"fmt"
	"testing"
)

// plainSeeds are inputs on and beside the fast paths of plain.go.
var plainSeeds = []string{
	`1`, `-1`, `0`, `-0`, `01`, `-`, `1.5`, `1e2`, `9223372036854775807`, `9223372036854775808`,
	`-9223372036854775808`, `-9223372036854775809`, `true`, `false`, `null`, `nul`, ` 1`, `1 `,
	`""`, `"a"`, `"a\"b"`, `"a\\n"`, "\"\x01\"", "\"\x7f\"", `"é"`, "\"\xff\"", `"a`, `"a"b"`, `"a""b"`,
	`{}`, `{"a":{}}`, `{"a":{"b":"1"}}`, `{"n1":{"c":"v1","d":"v2"},"n2":{"c":"v3"}}`,
	`{"a":{"b":"1"},"a":{"c":"2"}}`, `{"a":{"b":"1","b":"2"}}`, `{ "a":{}}`, `{"a":null}`, `null`,
	`{"a":{"b":1}}`, `{"a":{"b":"\u003c"}}`, `{"a":{"b":"1"},}`, `{"a":{"b":"1"}}x`, `{"a"}`, `{"a":`,
	`{"a":{"b":"1"}`, `{"\u00e9":{}}`, `[]`, ``,
}

// strict formats a value with its types (fmt sorts map keys).
func strict(v any) string { return fmt.Sprintf("%#v", v) }

// checkPlain fails when a fast path decodes s otherwise than encoding/json:
// DecodeString against Decode, DecodeStringMaps against json.Unmarshal.
func checkPlain(t *testing.T, s string) {
	t.Helper()
	got, err := DecodeString(s)
	want, wantErr := Decode([]byte(s))
	if (err == nil) != (wantErr == nil) || strict(got) != strict(want) {
		t.Fatalf("DecodeString(%q) = %s, %v; Decode: %s, %v", s, strict(got), err, strict(want), wantErr)
	}
	maps, err := DecodeStringMaps(s)
	var ref map[string]map[string]string
	refErr := json.Unmarshal([]byte(s), &ref)
	if refErr == nil && ref == nil {
		ref = map[string]map[string]string{}
	}
	if (err == nil) != (refErr == nil) || err == nil && strict(maps) != strict(ref) {
		t.Fatalf("DecodeStringMaps(%q) = %s, %v; json.Unmarshal: %s, %v", s, strict(maps), err, strict(ref), refErr)
	}
}

func TestPlain(t *testing.T) {
	for _, s := range plainSeeds {
		checkPlain(t, s)
	}
	for _, tt := range []struct {
		in   string
		want bool
	}{{`"a"`, true}, {`-12`, true}, {`"a\"b"`, false}, {`"é"`, false}, {`1.5`, false}, {`9223372036854775808`, false}} {
		if _, ok := plainScalar(tt.in); ok != tt.want {
			t.Errorf("plainScalar(%q) ok = %v, want %v", tt.in, ok, tt.want)
		}
	}
	if _, ok := plainStringMaps(`{"n":{"c":"v"},"m":{}}`); !ok {
		t.Error("compact versions seen are not read on the fast path")
	}
}

// TestPlainAllocs pins what the fast paths save: a plain string costs its
// box only; versions seen cost their maps only.
func TestPlainAllocs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		decode func()
		max    float64
	}{
		{"string", func() { _, _ = DecodeString(`"loop"`) }, 1},
		{"versions seen", func() { _, _ = DecodeStringMaps(`{"agent":{"messages":"1","route":"2"},"tools":{"plan":"3"}}`) }, 6},
	} {
		if got := testing.AllocsPerRun(50, tt.decode); got > tt.max {
			t.Errorf("%s: %.0f allocations, want at most %.0f", tt.name, got, tt.max)
		}
	}
}

// FuzzPlain checks the fast paths against encoding/json on any input.
func FuzzPlain(f *testing.F) {
	for _, s := range plainSeeds {
		f.Add(s)
	}
	f.Fuzz(checkPlain)
}
