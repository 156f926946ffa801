package checkpoint

import (
	"bytes"
	"math"
	"math/big"
	"time"
)

// sameValue reports whether a and b are structurally equal: the same kinds
// of values, maps with the same keys, lists of the same length, their
// elements equal in turn; []byte by bytes, time.Time by Equal, NaN equal to
// itself. With byValue, numbers (int64, uint64, float64) of different types
// are equal when their values are (JSON turns an integral float64 into an
// int64); without it, their types must match too.
func sameValue(a, b any, byValue bool) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool, string:
		return a == b
	case int64, uint64, float64:
		if !byValue {
			if fa, ok := a.(float64); ok {
				fb, ok := b.(float64)
				return ok && (fa == fb || math.IsNaN(fa) && math.IsNaN(fb))
			}
			return a == b
		}
		na, okA := number(a)
		nb, okB := number(b)
		if !okA || !okB {
			return okA == okB && isNaN(a) && isNaN(b)
		}
		return na.Cmp(nb) == 0
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i], byValue) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w, byValue) {
				return false
			}
		}
		return true
	case DeltaSnapshot:
		y, ok := b.(DeltaSnapshot)
		return ok && sameValue(x.Value, y.Value, byValue)
	}
	return false // a type no decoder returns
}

// number returns the exact value of an int64, uint64 or finite float64.
func number(v any) (*big.Float, bool) {
	switch n := v.(type) {
	case int64:
		return new(big.Float).SetInt64(n), true
	case uint64:
		return new(big.Float).SetUint64(n), true
	case float64:
		if math.IsNaN(n) {
			return nil, false
		}
		return new(big.Float).SetFloat64(n), true
	}
	return nil, false
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}
