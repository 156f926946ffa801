package canonjson

import (
	"encoding/json"
	"strconv"
)

// The fast paths of the decoders: the JSON redcheck reads back is almost
// always plain (compact, strings of printable ASCII without escapes), and
// reading it by hand allocates only the values, where encoding/json
// allocates per token. Whatever is not plain goes to encoding/json, so
// every input decodes exactly as it would without the fast paths. Strings
// decoded on a fast path are substrings of the input.

// plainScalar decodes a plain string, an integer literal that fits an
// int64, true, false or null; ok is false for anything else.
func plainScalar(s string) (v any, ok bool) {
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	case "null":
		return nil, true
	}
	if str, rest, ok := plainString(s); ok && rest == "" {
		return str, true
	}
	if !integerLiteral(s) {
		return nil, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// integerLiteral reports whether s is a JSON number without fraction or
// exponent: -?(0|[1-9][0-9]*).
func integerLiteral(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainString reads a JSON string at the start of s made of printable
// ASCII without escapes, and returns its contents and what follows it.
func plainString(s string) (str, rest string, ok bool) {
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[1:i], s[i+1:], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", "", false
		}
	}
	return "", "", false
}

// DecodeStringMaps decodes a JSON object of objects of strings (a
// checkpoint's versions seen) exactly as encoding/json.Unmarshal decodes it
// into a map[string]map[string]string, except that a null or empty input
// gives an empty map, never nil. Its errors are encoding/json's.
func DecodeStringMaps(s string) (map[string]map[string]string, error) {
	if m, ok := plainStringMaps(s); ok {
		return m, nil
	}
	var m map[string]map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]map[string]string{}
	}
	return m, nil
}

// plainStringMaps is DecodeStringMaps's fast path: compact JSON whose
// strings are all plain. As with encoding/json, the last of equal keys wins.
func plainStringMaps(s string) (map[string]map[string]string, bool) {
	m := map[string]map[string]string{}
	rest, ok := plainObject(s, func(key, rest string) (string, bool) {
		inner := map[string]string{}
		rest, ok := plainObject(rest, func(key, rest string) (string, bool) {
			v, rest, ok := plainString(rest)
			inner[key] = v
			return rest, ok
		})
		m[key] = inner
		return rest, ok
	})
	return m, ok && rest == ""
}

// plainObject reads a compact JSON object with plain keys at the start of
// s: for each key, value reads the value at the start of what follows the
// colon and returns what follows the value.
func plainObject(s string, value func(key, rest string) (string, bool)) (rest string, ok bool) {
	if s == "" || s[0] != '{' {
		return "", false
	}
	s = s[1:]
	if s != "" && s[0] == '}' {
		return s[1:], true
	}
	for {
		key, after, ok := plainString(s)
		if !ok || after == "" || after[0] != ':' {
			return "", false
		}
		if s, ok = value(key, after[1:]); !ok || s == "" {
			return "", false
		}
		switch s[0] {
		case ',':
			s = s[1:]
		case '}':
			return s[1:], true
		default:
			return "", false
		}
	}
}
