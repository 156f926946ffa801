package ui

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
)

// maxJSONDepth bounds how deep jsonValue follows nested values; deeper ones
// are cut with a marker, so a pathological value cannot blow up a response.
const maxJSONDepth = 64

// jsonValue returns v in a form encoding/json always encodes. Channel and
// write values are whatever the serializer decoded (from msgpack: int64,
// uint64, float64, string, []byte, time.Time, []any, map[string]any, and a
// checkpoint.DeltaSnapshot around any of them), and some of those fail or
// read badly in JSON: NaN and infinities fail, so they become strings;
// []byte becomes {"$bytes": base64}; time.Time becomes its RFC 3339 text (a
// year past 9999 fails in MarshalJSON); a DeltaSnapshot becomes {"$delta":
// value}. Any other type is kept when encoding/json accepts it, else
// replaced by its fmt %v text.
func jsonValue(v any) any { return safeValue(v, 0) }

func safeValue(v any, depth int) any {
	if depth > maxJSONDepth {
		return "…(nested too deep)"
	}
	switch x := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return x
	case float64:
		return safeFloat(x)
	case float32:
		return safeFloat(float64(x))
	case []byte:
		return map[string]any{"$bytes": base64.StdEncoding.EncodeToString(x)}
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = safeValue(e, depth+1)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = safeValue(e, depth+1)
		}
		return out
	case checkpoint.DeltaSnapshot:
		return map[string]any{"$delta": safeValue(x.Value, depth+1)}
	case *checkpoint.DeltaSnapshot:
		if x == nil {
			return nil
		}
		return map[string]any{"$delta": safeValue(x.Value, depth+1)}
	}
	if _, err := json.Marshal(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return v
}

func safeFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return f
}

// jsonMap applies jsonValue to every value of m (nil stays nil).
func jsonMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonValue(v)
	}
	return out
}
