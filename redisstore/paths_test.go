package redisstore

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

func TestTexts(t *testing.T) {
	value := map[string]any{
		"text": "hello",
		"n":    42,
		"f":    1.5,
		"b":    true,
		"nil":  nil,
		"obj":  map[string]any{"x": "ex", "y": map[string]any{"z": "zed"}, "n": 1},
		"list": []any{map[string]any{"text": "one"}, map[string]any{"text": "two"}, map[string]any{"other": 3}},
		"strs": []any{"a", "b", "c"},
	}
	enc, err := checkpoint.EncodeMetadataValue(value)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := checkpoint.DecodeMetadataValue(enc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{"$", []string{string(enc)}},
		{"text", []string{"hello"}},
		{"$.text", []string{"hello"}},
		{"n", []string{"42"}},
		{"f", []string{"1.5"}},
		{"b", []string{"true"}},
		{"nil", nil},
		{"missing", nil},
		{"obj.x", []string{"ex"}},
		{"obj.y", []string{`{"z":"zed"}`}},
		{"obj.y.z", []string{"zed"}},
		{"obj.*", []string{"1", "ex", `{"z":"zed"}`}},
		{"obj.{x,y.z}", []string{"ex", "zed"}},
		{"list[*].text", []string{"one", "two"}},
		{"list[1].text", []string{"two"}},
		{"list[-1]", []string{`{"other":3}`}},
		{"list[-4]", nil},
		{"list[9]", nil},
		{"strs[*]", []string{"a", "b", "c"}},
		{"strs[0]", []string{"a"}},
		{"text[0]", nil},
		{"strs.x", nil},
		{"*", nil}, // filled below
	}
	for _, tt := range tests[:len(tests)-1] {
		p, err := parsePath(tt.path)
		if err != nil {
			t.Fatalf("parsePath(%q): %v", tt.path, err)
		}
		if got := texts(tree, enc, []path{p}); !slices.Equal(got, tt.want) {
			t.Errorf("texts(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	p, _ := parsePath("*")
	if got := texts(tree, enc, []path{p}); len(got) != 7 {
		t.Errorf("texts(*) = %q: want one per non-null field", got)
	}
}

func TestParsePathErrors(t *testing.T) {
	for _, bad := range []string{"", "$.", ".a", "a.", "a..b", "a[", "a]", "a[x]", "a[1]b", "{a", "a}", "{$}", "a[1.5]"} {
		if _, err := parsePath(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("parsePath(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
	for _, good := range []string{"$", "a", "a.b", "a[0]", "a[-1].b", "a[*][*]", "{a,b}", "a.{b, c.d}", "*", "a.*.b", "$.a"} {
		if _, err := parsePath(good); err != nil {
			t.Errorf("parsePath(%q) = %v", good, err)
		}
	}
}
