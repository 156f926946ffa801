// Package codec holds the small binary-safe encodings redcheck stores inside
// hash fields and stream entries: length-prefixed parts ("len:part"), shared
// by the saver that writes them and the stream decoder that reads them.
package codec

import (
	"strconv"
	"strings"
)

// Pack joins parts as len ":" part for each but the last, which is appended
// as it is: binary safe, and the last part (a value's bytes) is not copied
// through an escape.
func Pack(parts ...string) string {
	n := 0
	for i, p := range parts {
		n += len(p)
		if i < len(parts)-1 {
			n += 21 // a length and ':' at most
		}
	}
	var b strings.Builder
	b.Grow(n) // one allocation, whatever the size of the parts
	for i, p := range parts {
		if i < len(parts)-1 {
			b.WriteString(strconv.Itoa(len(p)))
			b.WriteByte(':')
		}
		b.WriteString(p)
	}
	return b.String()
}

// PackValue is Pack(typ, string(data)), the plain form of a stored value,
// with data copied once (a state's values can be megabytes).
func PackValue(typ string, data []byte) string {
	var b strings.Builder
	b.Grow(len(typ) + 21 + len(data))
	b.WriteString(strconv.Itoa(len(typ)))
	b.WriteByte(':')
	b.WriteString(typ)
	b.Write(data)
	return b.String()
}

// Unpack splits what Pack joined into len(parts) parts, which it fills (the
// caller's array: nothing is allocated).
func Unpack(s string, parts []string) bool {
	if len(parts) == 0 {
		return false
	}
	last := len(parts) - 1
	for i := range parts[:last] {
		l, rest, ok := CutLen(s)
		if !ok || len(rest) < l {
			return false
		}
		parts[i], s = rest[:l], rest[l:]
	}
	parts[last] = s
	return true
}

// CutLen reads a decimal length and the ':' after it.
func CutLen(s string) (int, string, bool) {
	head, rest, ok := strings.Cut(s, ":")
	if !ok || head == "" || len(head) > 10 || len(head) > 1 && head[0] == '0' {
		return 0, "", false // leading zeros: not what Pack writes
	}
	for i := 0; i < len(head); i++ {
		if head[i] < '0' || head[i] > '9' {
			return 0, "", false // signs and the like: not what Pack writes
		}
	}
	n, err := strconv.Atoi(head)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, rest, true
}

// JoinNames packs names as len ":" name, repeated.
func JoinNames(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(strconv.Itoa(len(n)))
		b.WriteByte(':')
		b.WriteString(n)
	}
	return b.String()
}

// SplitNames reverses JoinNames.
func SplitNames(s string) ([]string, bool) {
	var out []string
	for s != "" {
		n, rest, ok := CutLen(s)
		if !ok || n > len(rest) {
			return nil, false
		}
		out = append(out, rest[:n])
		s = rest[n:]
	}
	return out, true
}

// WriteField names a pending write in a checkpoint hash (docs/storage-format.md):
// "w:" len(task) ":" task ":" idx. The length makes it injective.
func WriteField(taskID string, idx int) string {
	return "w:" + strconv.Itoa(len(taskID)) + ":" + taskID + ":" + strconv.Itoa(idx)
}

// ParseWriteField reverses WriteField; ok is false for any other field.
func ParseWriteField(f string) (taskID string, idx int, ok bool) {
	rest, ok := strings.CutPrefix(f, "w:")
	if !ok {
		return "", 0, false
	}
	n, rest, ok := CutLen(rest)
	if !ok || len(rest) < n+1 || rest[n] != ':' {
		return "", 0, false
	}
	idx, err := strconv.Atoi(rest[n+1:])
	if err != nil {
		return "", 0, false
	}
	return rest[:n], idx, true
}
