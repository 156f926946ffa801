package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Decode decodes exactly one JSON value from data (surrounding whitespace
// allowed) into nil, bool, string, []any, map[string]any and numbers:
// integers (literals without '.', 'e' or 'E') become int64, or uint64 above
// math.MaxInt64 when they fit, every other number float64 (a literal beyond
// the float64 range is an error). Invalid UTF-8 in strings is replaced by
// U+FFFD, as encoding/json does. Malformed JSON, trailing data and nesting
// deeper than MaxDepth levels give an error wrapping ErrMalformed.
func Decode(data []byte) (any, error) {
	return decode(bytes.NewReader(data), data)
}

// DecodeString decodes data as Decode decodes the same bytes, without
// copying them. A plain string or integer (see plain.go) is read without
// encoding/json, and such a string is a substring of data.
func DecodeString(data string) (any, error) {
	if v, ok := plainScalar(data); ok {
		return v, nil
	}
	return decode(strings.NewReader(data), data)
}

// decode decodes the one JSON value r reads; data is what r reads.
func decode[T string | []byte](r io.Reader, data T) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	rest := data[dec.InputOffset():]
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return nil, fmt.Errorf("%w: trailing data after value", ErrMalformed)
		}
	}
	return normalize(v)
}

// normalize replaces, in place, every json.Number of a tree decoded with
// UseNumber by an int64, uint64 or float64.
func normalize(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := parseNumber(string(x))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return n, nil
	case map[string]any:
		for k, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	}
	return v, nil
}

// parseNumber converts a JSON number literal: integers (no '.', 'e' or 'E')
// to int64 when they fit, else to uint64 when they fit; everything else to
// float64 (an underflow rounds to 0 or a subnormal, as JSON means). A literal
// beyond the float64 range, or not a number, is an error.
func parseNumber(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && (!errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0)) {
		return nil, fmt.Errorf("number %q: %w", truncate(s), err)
	}
	return f, nil
}

// truncate keeps error messages short when a hostile input is huge.
func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
