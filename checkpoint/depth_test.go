package checkpoint

import (
	"errors"
	"testing"
)

// TestEncodedDecodes: at the nesting limit, what a serializer encodes it
// decodes, and one level deeper it refuses to encode (a checkpoint must
// never be stored in a form that cannot be read back).
func TestEncodedDecodes(t *testing.T) {
	nest := func(n int, wrap func(any) any) any {
		var v any = 1
		for range n {
			v = wrap(v)
		}
		return v
	}
	shapes := map[string]func(any) any{
		"list": func(v any) any { return []any{v} },
		"map":  func(v any) any { return map[string]any{"k": v} },
	}
	for _, ser := range []Serializer{MsgpackSerializer{}, JSONSerializer{}} {
		for name, wrap := range shapes {
			for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1, 2 * maxDepth} {
				typ, data, err := ser.DumpsTyped(nest(n, wrap))
				if err != nil {
					if !errors.Is(err, ErrSerialization) {
						t.Errorf("%T %s %d: %v, want ErrSerialization", ser, name, n, err)
					}
					if n <= maxDepth-1 {
						t.Errorf("%T %s %d levels refused: %v", ser, name, n, err)
					}
					continue
				}
				if _, err := ser.LoadsTyped(typ, data); err != nil {
					t.Errorf("%T %s %d levels: encoded, then %v", ser, name, n, err)
				}
			}
		}
	}
}
