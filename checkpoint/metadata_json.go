package checkpoint

import (
	"bytes"
	"fmt"

	"github.com/graphstate/redcheck/internal/canonjson"
)

// EncodeMetadataValue returns the canonical JSON of v, the form in which
// savers store metadata values and compare them with a filter, byte for byte.
// Values equal by the rule of ListQuery.Filter (numbers by value, objects and
// arrays by deep equality) give identical bytes:
//
//   - there is no whitespace and no HTML escaping; object keys are sorted by
//     their bytes, at every depth;
//   - structs use their JSON field names and a []byte is a base64 string, as
//     encoding/json writes them;
//   - every number, of any Go numeric type or json.Number, is normalised: an
//     integral value from math.MinInt64 to math.MaxUint64 is written as a
//     plain decimal integer (int 1, float32(1), 1.0 and json.Number("1.0")
//     all give 1), any other value as strconv.FormatFloat(f, 'g', -1, 64) of
//     its float64. NaN and infinities are refused;
//   - strings are written as encoding/json writes them without HTML
//     escaping, except that each byte of invalid UTF-8 becomes U+FFFD as
//     UTF-8; object keys that become equal this way are refused.
//
// A value JSON cannot represent (a channel, a func, a complex number, NaN, a
// cycle, nesting deeper than 10000 levels) gives an error wrapping
// ErrInvalidCheckpoint. The format is the storage format of package
// internal/canonjson, which documents it in full.
func EncodeMetadataValue(v any) ([]byte, error) {
	if md, ok := v.(Metadata); ok {
		v = map[string]any(md)
	}
	b, err := canonjson.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: metadata: %w: %w", ErrInvalidCheckpoint, err)
	}
	return b, nil
}

// DecodeMetadataValue decodes one JSON value, as EncodeMetadataValue writes
// it: integers (literals without '.', 'e' or 'E') become int64, or uint64
// above math.MaxInt64 when they fit, every other number float64, objects
// map[string]any, arrays []any. Malformed JSON, trailing data and nesting
// deeper than 10000 levels give an error wrapping ErrSerialization.
func DecodeMetadataValue(data []byte) (any, error) {
	return decodeMetadata(canonjson.Decode(data))
}

// DecodeMetadataString decodes data as DecodeMetadataValue decodes the same
// bytes, without copying them; strings of the value may share data's memory.
func DecodeMetadataString(data string) (any, error) {
	return decodeMetadata(canonjson.DecodeString(data))
}

func decodeMetadata(v any, err error) (any, error) {
	if err != nil {
		return nil, serWrap("metadata decode", err)
	}
	return v, nil
}

// Matches reports whether m satisfies filter: for every key of filter, the
// canonical JSON (EncodeMetadataValue) of the filter's value equals that of
// m's value. A nil filter value also matches a missing key. An empty or nil
// filter matches everything. An error is returned, wrapping
// ErrInvalidCheckpoint, when a value compared cannot be encoded.
func (m Metadata) Matches(filter Metadata) (bool, error) {
	for k, fv := range filter {
		mv, ok := m[k]
		if !ok {
			if fv == nil {
				continue
			}
			return false, nil
		}
		want, err := EncodeMetadataValue(fv)
		if err != nil {
			return false, fmt.Errorf("checkpoint: filter key %q: %w", k, err)
		}
		got, err := EncodeMetadataValue(mv)
		if err != nil {
			return false, fmt.Errorf("checkpoint: metadata key %q: %w", k, err)
		}
		if !bytes.Equal(want, got) {
			return false, nil
		}
	}
	return true, nil
}
