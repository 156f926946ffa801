package redissaver

import (
	"math"
	"strconv"
)

// The bytes a call sends and receives (opCount, redcheck.bytes.sent and
// redcheck.bytes.received, redcheck.client.written and
// redcheck.client.read): counted from the very arguments and replies, at
// no allocation.

// argBytes is the size of a command's keys and arguments: a string or a
// byte string by its length, a number by its decimal form (as go-redis
// sends it), anything else by nothing.
func argBytes(keys []string, args []any) int64 {
	var n int64
	for _, k := range keys {
		n += int64(len(k))
	}
	for _, a := range args {
		n += valueBytes(a)
	}
	return n
}

// valueBytes is the size of one argument (argBytes).
func valueBytes(a any) int64 {
	switch v := a.(type) {
	case string:
		return int64(len(v))
	case []byte:
		return int64(len(v))
	case int:
		return decimalLen(int64(v))
	case int64:
		return decimalLen(v)
	case int32:
		return decimalLen(int64(v))
	case uint32:
		return decimalLen(int64(v))
	case uint64:
		if v > math.MaxInt64 {
			return 20
		}
		return decimalLen(int64(v))
	case float64:
		var buf [32]byte
		return int64(len(strconv.AppendFloat(buf[:0], v, 'f', -1, 64)))
	}
	return 0
}

// decimalLen is the length of n in decimal.
func decimalLen(n int64) int64 {
	l := int64(1)
	if n < 0 {
		l++
		if n == math.MinInt64 {
			return 20
		}
		n = -n
	}
	for n >= 10 {
		n /= 10
		l++
	}
	return l
}

// replyBytes is the size of the strings of a reply (the elements of its
// arrays included); integers, nils and errors count nothing.
func replyBytes(v any) int64 {
	switch r := v.(type) {
	case string:
		return int64(len(r))
	case []any:
		var n int64
		for _, e := range r {
			n += replyBytes(e)
		}
		return n
	case []string:
		var n int64
		for _, e := range r {
			n += int64(len(e))
		}
		return n
	}
	return 0
}

// args counts the keys and arguments of a command the call sends.
func (n *opCount) args(keys []string, args []any) {
	if n != nil {
		n.sent += argBytes(keys, args)
	}
}

// reply counts the strings of a reply the call received.
func (n *opCount) reply(v any) {
	if n != nil {
		n.received += replyBytes(v)
	}
}
