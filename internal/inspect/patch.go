package inspect

import (
	"maps"
	"reflect"
	"slices"
	"strings"
)

// PatchOp is one operation of an RFC 6902 JSON Patch.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// PointerGet returns the member of v at the JSON Pointer path, through
// objects only (the paths JSONPatch makes); nil when there is none.
func PointerGet(v any, path string) any {
	if path == "" {
		return v
	}
	for _, tok := range strings.Split(path[1:], "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return v
}

// JSONPatch appends to ops the operations that turn from into to, at path:
// objects are compared key by key (recursively), any other pair of
// different values is one replace. Keys are visited in byte order, so the
// patch is a function of its inputs.
func JSONPatch(path string, from, to any, ops *[]PatchOp) {
	if reflect.DeepEqual(from, to) {
		return
	}
	fm, ok1 := from.(map[string]any)
	tm, ok2 := to.(map[string]any)
	if !ok1 || !ok2 {
		*ops = append(*ops, PatchOp{Op: "replace", Path: path, Value: nullable(to)})
		return
	}
	for _, k := range slices.Sorted(maps.Keys(fm)) {
		if _, ok := tm[k]; !ok {
			*ops = append(*ops, PatchOp{Op: "remove", Path: path + "/" + pointerToken(k)})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(tm)) {
		p := path + "/" + pointerToken(k)
		if old, ok := fm[k]; ok {
			JSONPatch(p, old, tm[k], ops)
		} else {
			*ops = append(*ops, PatchOp{Op: "add", Path: p, Value: nullable(tm[k])})
		}
	}
}

// jsonNull is a value that encodes as JSON null even under omitempty: a
// patch operation's "value" is required for add and replace.
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

func nullable(v any) any {
	if v == nil {
		return jsonNull{}
	}
	return v
}

// pointerToken escapes a key for a JSON Pointer (RFC 6901).
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
