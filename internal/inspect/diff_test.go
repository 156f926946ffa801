package inspect

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, c := range []struct {
		name     string
		from, to map[string]any
		want     []ChannelChange
		same     int
	}{
		{"equal", map[string]any{"a": 1.0, "b": []any{"x"}}, map[string]any{"a": 1.0, "b": []any{"x"}}, []ChannelChange{}, 2},
		{"added and removed", map[string]any{"gone": true}, map[string]any{"new": "y"},
			[]ChannelChange{{Channel: "gone", Kind: Removed, Old: true}, {Channel: "new", Kind: Added, New: "y"}}, 0},
		{"scalar changed", map[string]any{"n": 1.0}, map[string]any{"n": 2.0},
			[]ChannelChange{{Channel: "n", Kind: Changed, Old: 1.0, New: 2.0}}, 0},
		{"list changed: whole", map[string]any{"m": []any{"a"}}, map[string]any{"m": []any{"a", "b"}},
			[]ChannelChange{{Channel: "m", Kind: Changed, Old: []any{"a"}, New: []any{"a", "b"}}}, 0},
		{"object changed: its members",
			map[string]any{"p": map[string]any{"a": 1.0, "b": "x", "t~/k": 0.0}},
			map[string]any{"p": map[string]any{"a": 2.0, "c": nil, "t~/k": 0.0}},
			[]ChannelChange{{Channel: "p", Kind: Changed,
				Old: map[string]any{"a": 1.0, "b": "x", "t~/k": 0.0}, New: map[string]any{"a": 2.0, "c": nil, "t~/k": 0.0},
				Members: []PatchOp{{Op: "remove", Path: "/b"}, {Op: "replace", Path: "/a", Value: 2.0}, {Op: "add", Path: "/c", Value: jsonNull{}}}}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, same := Diff(c.from, c.to)
			if !reflect.DeepEqual(got, c.want) || same != c.same {
				t.Errorf("Diff = %+v, %d; want %+v, %d", got, same, c.want, c.same)
			}
		})
	}
}

func TestPatchPointers(t *testing.T) {
	from := map[string]any{"a/b": map[string]any{"~x": 1.0}, "keep": "k"}
	to := map[string]any{"a/b": map[string]any{"~x": 2.0}, "keep": "k"}
	ops := Patch(from, to)
	data, _ := json.Marshal(ops)
	if want := `[{"op":"replace","path":"/a~1b/~0x","value":2}]`; string(data) != want {
		t.Fatalf("patch %s, want %s", data, want)
	}
	if v := PointerGet(from, ops[0].Path); v != 1.0 {
		t.Errorf("PointerGet %v, want the old value 1", v)
	}
	if v := PointerGet(from, "/keep/deeper"); v != nil {
		t.Errorf("PointerGet through a string: %v", v)
	}
	if ops := Patch(from, from); len(ops) != 0 || ops == nil {
		t.Errorf("patch of equal values: %#v, want empty and not nil", ops)
	}
}
