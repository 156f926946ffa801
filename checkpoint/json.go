package checkpoint

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"

	"github.com/graphstate/redcheck/internal/canonjson"
)

// JSONSerializer is a Serializer that encodes values with encoding/json,
// under the type tag "json". Its zero value is ready to use and it is safe
// for concurrent use.
//
// DumpsTyped writes nil with the tag "null" and no data, a top-level []byte
// with the tag "bytes" and the bytes themselves (a nested []byte is a base64
// string, as encoding/json writes it), a DeltaSnapshot with "delta/" before
// the tag of its value, and any other value as JSON without HTML escaping.
// A value encoding/json cannot encode (a channel, a func, NaN or an infinity,
// a cycle) gives an error wrapping ErrSerialization, and so does a
// DeltaSnapshot holding another.
//
// LoadsTyped accepts "null", "bytes", "json" and "msgpack" (so a store can
// switch between JSONSerializer and MsgpackSerializer and still read what it
// wrote before), each optionally prefixed once by "delta/", and returns a
// DeltaSnapshot for the prefixed tags. JSON decodes to nil, bool, string,
// []any and map[string]any; a number literal without '.', 'e' or 'E' becomes
// an int64 when it fits, a uint64 when it is above math.MaxInt64 and fits in
// a uint64, and a float64 otherwise, as does every other number (a literal
// beyond the float64 range is an error). JSON does not tell 1.0 from 1, so
// an integral float64 (written "1" by encoding/json) comes back as an int64,
// where MsgpackSerializer keeps it a float64. Structs come back as
// map[string]any keyed by their JSON names, time.Time as its RFC 3339
// string. Invalid UTF-8 in strings is
// replaced by U+FFFD, as encoding/json does. Unknown tags, malformed JSON,
// trailing data after the value and nesting deeper than 10000 levels give an
// error wrapping ErrSerialization.
type JSONSerializer struct{}

var (
	_ Serializer   = JSONSerializer{}
	_ StringLoader = JSONSerializer{}
)

// DumpsTyped encodes v; see JSONSerializer.
func (JSONSerializer) DumpsTyped(v any) (string, []byte, error) {
	return dumpsTyped(v, TagJSON, encodeJSON)
}

// LoadsTyped decodes data written with the type tag typ; see JSONSerializer.
func (JSONSerializer) LoadsTyped(typ string, data []byte) (any, error) {
	return loadsTyped(typ, string(data))
}

// LoadsTypedString decodes data as LoadsTyped decodes the same bytes, without
// copying them; see StringLoader.
func (JSONSerializer) LoadsTypedString(typ, data string) (any, error) {
	return loadsTyped(typ, data)
}

// encodeJSON encodes v as compact JSON without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	// Nesting the decoder would refuse is refused here: what encodes decodes.
	if err := checkDynamic(v, 0); err != nil {
		return nil, err
	}
	v = exactIntegralFloats(v, 0)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, serWrap("json encode", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// exactIntegralFloats returns v with every integral float64 in the int64
// range, in maps of string to any and slices of any, replaced by the int64
// of the same value. JSON writes a float by its shortest decimal, which for
// integral floats beyond 2^53 is a different integer (2^54+8 is written
// 18014398509481990): written as an int64 it stays exact, and it decodes as
// the int64 it would have become anyway. Other containers are left as they
// are. Only what changes is copied; nesting beyond maxDepth is left to the
// encoder, which refuses cycles.
func exactIntegralFloats(v any, depth int) any {
	if depth > maxDepth {
		return v // a cycle or absurd nesting: the encoder refuses it
	}
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x)
		}
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if c := exactIntegralFloats(e, depth+1); !sameDynamic(c, e) {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = c
			}
		}
		if out != nil {
			return out
		}
	case []any:
		var out []any
		for i, e := range x {
			if c := exactIntegralFloats(e, depth+1); !sameDynamic(c, e) {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = c
			}
		}
		if out != nil {
			return out
		}
	}
	return v
}

// sameDynamic reports whether exactIntegralFloats left e as it was: a
// scalar of the same type and value, or the very same container.
func sameDynamic(c, e any) bool {
	switch ce := c.(type) {
	case int64:
		_, wasFloat := e.(float64)
		return !wasFloat
	case map[string]any:
		em, ok := e.(map[string]any)
		return ok && len(em) == len(ce) && (len(ce) == 0 || reflect.ValueOf(em).UnsafePointer() == reflect.ValueOf(ce).UnsafePointer())
	case []any:
		es, ok := e.([]any)
		return ok && len(es) == len(ce) && (len(ce) == 0 || &es[0] == &ce[0])
	}
	return true
}

// decodeJSON decodes exactly one JSON value from data (surrounding
// whitespace allowed) and normalises its numbers (see canonjson.Decode).
func decodeJSON(data string) (any, error) {
	v, err := canonjson.DecodeString(data)
	if err != nil {
		return nil, serWrap("json decode", err)
	}
	return v, nil
}
