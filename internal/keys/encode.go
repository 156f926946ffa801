package keys

import (
	"errors"
	"fmt"
)

const hexDigits = "0123456789ABCDEF"

// safe reports whether b stands for itself in an encoded component.
func safe(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '-', '_', '.', '~', '@', '+', '=', ',', ';', '!', '$', '&', '\'', '(', ')', '/', '|', '^', '<', '>', '#':
		return true
	}
	return false
}

// Encode escapes s for use as one component of a key: every byte outside
// [A-Za-z0-9] and -_.~@+=,;!$&'()/|^<># becomes %XX (upper-case hex). The
// result never contains ':', '{', '}', '*', '?', '[', ']', '\\', '%'
// (except as an escape), spaces or control bytes, and Encode is injective.
func Encode(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !safe(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	out := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		b := s[i]
		if safe(b) {
			out = append(out, b)
			continue
		}
		out = append(out, '%', hexDigits[b>>4], hexDigits[b&15])
	}
	return string(out)
}

// ErrMalformed is returned by Decode and the Parse functions for a string
// that Encode or the layout cannot have produced.
var ErrMalformed = errors.New("keys: malformed key")

// Decode reverses Encode. It rejects anything Encode cannot produce
// (lower-case hex, unescaped unsafe bytes, truncated escapes).
func Decode(s string) (string, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b != '%' {
			if !safe(b) {
				return "", fmt.Errorf("%w: byte %q must be escaped", ErrMalformed, b)
			}
			out = append(out, b)
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("%w: truncated escape", ErrMalformed)
		}
		hi, lo := unhex(s[i+1]), unhex(s[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("%w: bad escape %q", ErrMalformed, s[i:i+3])
		}
		v := byte(hi<<4 | lo)
		if safe(v) {
			return "", fmt.Errorf("%w: needless escape %q", ErrMalformed, s[i:i+3])
		}
		out = append(out, v)
		i += 2
	}
	return string(out), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
