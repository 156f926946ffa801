package inspect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
)

// Plain turns a value decoded by a serializer into one of nil, bool,
// json.Number, string, []any and map[string]any, which encoding/json writes
// as it is and which compare with reflect.DeepEqual: []byte becomes its
// base64 text (as encoding/json writes it), a time its RFC 3339 text, NaN
// and the infinities their names, a checkpoint.DeltaSnapshot the object
// {"$delta_snapshot": value}, anything else its %v text.
func Plain(v any) any {
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case int:
		return json.Number(strconv.Itoa(x))
	case uint64:
		return json.Number(strconv.FormatUint(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case json.Number:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case checkpoint.DeltaSnapshot:
		return map[string]any{"$delta_snapshot": Plain(x.Value)}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Plain(e)
		}
		return out
	case checkpoint.Metadata:
		return Plain(map[string]any(x))
	}
	// Another type (a metadata number of another width, say): through
	// encoding/json when it can, else as text.
	if data, err := json.Marshal(v); err == nil {
		var out any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if d.Decode(&out) == nil {
			return out
		}
	}
	return fmt.Sprintf("%v", v)
}
