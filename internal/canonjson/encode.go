// Package canonjson is the canonical JSON redcheck stores metadata and
// memory-store values in, and compares filters with, byte for byte: Encode
// writes it, Decode reads any JSON into the values Encode accepts. It is a
// storage format, shared by the savers (checkpoint.EncodeMetadataValue and
// Metadata.Matches forward to it) and the memory store.
package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of objects and arrays that Encode writes and
// Decode reads. It matches encoding/json's own limit.
const MaxDepth = 10000

var (
	// ErrUnsupported is wrapped by the errors of Encode: the value has no
	// canonical JSON form.
	ErrUnsupported = errors.New("value not representable in canonical JSON")
	// ErrMalformed is wrapped by the errors of Decode: the bytes are not
	// one JSON value within the limits.
	ErrMalformed = errors.New("malformed JSON")
)

// Encode returns the canonical JSON of v. Values equal by the rule of
// checkpoint.ListQuery.Filter (numbers by value, objects and arrays by deep
// equality) give identical bytes:
//
//   - there is no whitespace and no HTML escaping; object keys are sorted by
//     their bytes, at every depth;
//   - map[string]any, []any, map[string]string and []string are
//     walked directly; any other value (structs, typed maps and slices,
//     json.Marshaler and encoding.TextMarshaler values, pointers) first goes
//     through encoding/json, so structs use their JSON field names and a
//     []byte is a base64 string;
//   - every number, of any Go numeric type or json.Number, is normalised: an
//     integral value from math.MinInt64 to math.MaxUint64 is written as a
//     plain decimal integer (int 1, int8(1), uint(1), float32(1), 1.0 and
//     json.Number("1.0") all give 1; uint64 values above math.MaxInt64 are
//     exact), any other value as strconv.FormatFloat(f, 'g', -1, 64) of its
//     float64 (json.Number literals with a fraction or exponent are compared
//     at float64 precision). NaN and infinities are refused;
//   - strings are written as encoding/json writes them without HTML
//     escaping: '"', '\\' and control characters (U+0000 included, as
//     \u0000) escaped, U+2028 and U+2029 escaped, other characters as
//     UTF-8; each byte of invalid UTF-8 is replaced by U+FFFD (written as
//     UTF-8, so that decoding and encoding again gives the same bytes). Two
//     strings that differ only in their invalid bytes therefore encode
//     alike; object keys that become equal this way are refused.
//
// A value JSON cannot represent (a channel, a func, a complex number, NaN, a
// cycle, nesting deeper than 10000 levels) gives an error wrapping
// ErrUnsupported.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrUnsupported)...)
}

func writeCanonical(buf *bytes.Buffer, v any, depth int) error {
	if depth > MaxDepth {
		return unsupported("value nested deeper than %d levels or cyclic", MaxDepth)
	}
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case string:
		writeString(buf, x)
	case int:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int8:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case uint:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint8:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint16:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint32:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		buf.WriteString(strconv.FormatUint(x, 10))
	case uintptr:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case float32:
		return writeFloat(buf, float64(x))
	case float64:
		return writeFloat(buf, x)
	case json.Number:
		return writeNumber(buf, string(x))
	case map[string]any:
		return writeObject(buf, x, depth)
	case map[string]string:
		return writeObject(buf, x, depth)
	case []any:
		return writeArray(buf, x, depth)
	case []string:
		return writeArray(buf, x, depth)
	default:
		// Anything else takes its JSON form first. encoding/json detects
		// cycles and refuses what JSON cannot hold.
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var generic any
		if err := dec.Decode(&generic); err != nil {
			return fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		return writeCanonical(buf, generic, depth)
	}
	return nil
}

func writeObject[V any](buf *bytes.Buffer, m map[string]V, depth int) error {
	keys := make([]string, 0, len(m))
	byKey := make(map[string]string, len(m)) // canonical key -> original key
	for k := range m {
		ck := k
		if !utf8.ValidString(k) {
			ck = replaceInvalidUTF8(k)
		}
		if _, dup := byKey[ck]; dup {
			return unsupported("object keys %q collide once invalid UTF-8 is replaced", ck)
		}
		byKey[ck] = k
		keys = append(keys, ck)
	}
	slices.Sort(keys)
	buf.WriteByte('{')
	for i, ck := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, ck)
		buf.WriteByte(':')
		if err := writeCanonical(buf, m[byKey[ck]], depth+1); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

func writeArray[E any](buf *bytes.Buffer, a []E, depth int) error {
	buf.WriteByte('[')
	for i, e := range a {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := writeCanonical(buf, e, depth+1); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeNumber writes a json.Number after checking that it is a JSON number
// literal.
func writeNumber(buf *bytes.Buffer, s string) error {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') ||
		s[len(s)-1] < '0' || s[len(s)-1] > '9' || !json.Valid([]byte(s)) {
		return unsupported("invalid number literal %q", truncate(s))
	}
	n, err := parseNumber(s)
	if err != nil {
		return unsupported("number %q out of range", truncate(s))
	}
	return writeCanonical(buf, n, 0)
}

// writeFloat writes an integral f from math.MinInt64 to math.MaxUint64 as an
// exact integer, any other finite f in the shortest 'g' form.
func writeFloat(buf *bytes.Buffer, f float64) error {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return unsupported("number %v is not representable in JSON", f)
	case f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64:
		// f < 2^63 here, so the conversion is exact.
		buf.WriteString(strconv.FormatInt(int64(f), 10))
	case f == math.Trunc(f) && f >= math.MaxInt64 && f < math.MaxUint64:
		// float64(math.MaxInt64) is 2^63 and float64(math.MaxUint64) is
		// 2^64: f is in [2^63, 2^64) and fits a uint64 exactly.
		buf.WriteString(strconv.FormatUint(uint64(f), 10))
	default:
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return nil
}

// writeString writes s as a JSON string the way encoding/json does with
// HTML escaping off, except that a byte of invalid UTF-8 becomes the UTF-8
// of U+FFFD rather than the escape \ufffd, so that a decoded string encodes
// to the same bytes as the original.
func writeString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case c == '\n':
				buf.WriteString(`\n`)
			case c == '\r':
				buf.WriteString(`\r`)
			case c == '\t':
				buf.WriteString(`\t`)
			case c == '\b':
				buf.WriteString(`\b`)
			case c == '\f':
				buf.WriteString(`\f`)
			case c < 0x20:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			default:
				buf.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf.WriteRune(utf8.RuneError)
		case r == '\u2028' || r == '\u2029':
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[r&0xf])
		default:
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
}

// replaceInvalidUTF8 replaces each byte of invalid UTF-8 in s by U+FFFD, as
// writeString and encoding/json do.
func replaceInvalidUTF8(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
