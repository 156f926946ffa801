package checkpoint

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// referenceDecode decodes data with github.com/vmihailenco/msgpack/v5 and
// normalises the result by the rules MsgpackSerializer documents, so that it
// can be compared with decodeMsgpack structurally: integers as int64 (uint64
// above math.MaxInt64), float32 as float64, timestamps in UTC, map keys
// converted to strings (binary keys by their bytes, others with fmt.Sprint of
// the normalised key, the last of equal keys winning). It fails like
// decodeMsgpack on trailing bytes.
func referenceDecode(data []byte) (any, error) {
	r := bytes.NewReader(data)
	dec := msgpack.NewDecoder(r)
	dec.SetMapDecoder(referenceMap)
	v, err := dec.DecodeInterface()
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes", r.Len())
	}
	return normalizeReference(v), nil
}

// referenceMap decodes a map with string keys, converting other keys.
func referenceMap(d *msgpack.Decoder) (any, error) {
	n, err := d.DecodeMapLen()
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, min(n, 64))
	for range n {
		k, err := d.DecodeInterface()
		if err != nil {
			return nil, err
		}
		v, err := d.DecodeInterface()
		if err != nil {
			return nil, err
		}
		switch key := normalizeReference(k).(type) {
		case string:
			m[key] = normalizeReference(v)
		case []byte:
			m[string(key)] = normalizeReference(v)
		default:
			m[fmt.Sprint(key)] = normalizeReference(v)
		}
	}
	return m, nil
}

// normalizeReference maps the types vmihailenco/msgpack decodes to those of
// decodeMsgpack.
func normalizeReference(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x)
		}
	case float32:
		return float64(x)
	case time.Time:
		return x.UTC()
	case []any:
		for i, e := range x {
			x[i] = normalizeReference(e)
		}
	}
	return v
}

// nanosecondsOutOfRange reports whether data holds a timestamp extension
// whose nanoseconds are 1e9 or more: the MessagePack spec forbids them and
// decodeMsgpack refuses them, where vmihailenco/msgpack lets time.Unix
// carry them into the seconds. It is the one intended divergence.
func nanosecondsOutOfRange(err error) bool {
	return err != nil && strings.Contains(err.Error(), "timestamp nanoseconds")
}

// checkDifferential decodes data with both readers and fails when they
// disagree on success or on the value.
//
// When decodeMsgpack refuses a declared length longer than the bytes that
// remain, the input is truncated whatever a decoder does, and the reference
// is not run: vmihailenco/msgpack allocates a declared array length before
// reading its elements (16 GiB for an array32 of 2^32-1), which is why
// MsgpackSerializer has its own reader.
func checkDifferential(t *testing.T, data []byte) {
	t.Helper()
	got, err := decodeMsgpack(string(data))
	if err != nil && strings.Contains(err.Error(), "exceeds the remaining") {
		return
	}
	want, refErr := referenceDecode(data)
	switch {
	case err != nil && refErr != nil:
		return
	case err != nil && nanosecondsOutOfRange(err):
		return
	case err != nil:
		t.Fatalf("decodeMsgpack(%x) failed: %v; vmihailenco/msgpack decodes %#v", data, err, want)
	case refErr != nil:
		t.Fatalf("decodeMsgpack(%x) = %#v; vmihailenco/msgpack fails: %v", data, got, refErr)
	case !sameValue(got, want, false):
		t.Fatalf("decodeMsgpack(%x) = %#v; vmihailenco/msgpack decodes %#v", data, got, want)
	}
}

// differentialSeeds are inputs of every MessagePack family, valid and not.
var differentialSeeds = [][]byte{
	{0x00}, {0x7f}, {0xe0}, {0xff}, {0xc0}, {0xc2}, {0xc3},
	{0xcc, 0xff}, {0xcd, 0xff, 0xff}, {0xce, 0xff, 0xff, 0xff, 0xff},
	{0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0}, {0xcf, 0, 0, 0, 0, 0, 0, 0, 9},
	{0xd0, 0x80}, {0xd1, 0x80, 0}, {0xd2, 0x80, 0, 0, 0}, {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0},
	{0xca, 0x7f, 0xc0, 0, 0}, {0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1}, {0xca, 0x3f, 0xc0, 0, 0},
	{0xa2, 'h', 'i'}, {0xa1, 0xff}, {0xd9, 2, 'h', 'i'}, {0xda, 0, 1, 'x'}, {0xdb, 0, 0, 0, 1, 'x'},
	{0xc4, 1, 7}, {0xc5, 0, 1, 7}, {0xc6, 0, 0, 0, 1, 7},
	{0x92, 0x01, 0xa1, 'a'}, {0xdc, 0, 2, 1, 2}, {0xdd, 0, 0, 0, 1, 0xc0},
	{0x81, 0xa1, 'a', 0x01}, {0x81, 0xd9, 1, 'a', 0x30}, {0x81, 0x01, 0xa1, 'a'}, {0x81, 0xc4, 1, 'k', 0xc3}, {0x81, 0xc0, 0x01},
	{0x81, 0x92, 0x01, 0x02, 0x03}, {0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02}, {0x81, 0xca, 0x3f, 0xc0, 0, 0, 0x01},
	{0xde, 0, 1, 0xa1, 'a', 0x90}, {0xdf, 0, 0, 0, 1, 0xa1, 'a', 0x80},
	{0xd6, 0xff, 0, 0, 0, 10}, {0xd7, 0xff, 0, 0, 0, 4, 0, 0, 0, 1},
	{0xc7, 12, 0xff, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2},
	{0xd7, 0xff, 0xff, 0xff, 0xff, 0xfc, 0, 0, 0, 1}, // nanoseconds >= 1e9
	{0xd4, 0x01, 0x00}, {0xd6, 0xff, 0, 0}, {0xc1}, {0x91}, {0x81, 0xa1}, {0x01, 0x02},
	{0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdb, 0xff, 0xff, 0xff, 0xff}, {},
}

// TestMsgpackDifferential runs the seeds of FuzzMsgpackDifferential, and
// what MsgpackSerializer writes for the values of the round-trip tests.
func TestMsgpackDifferential(t *testing.T) {
	for _, data := range differentialSeeds {
		checkDifferential(t, data)
	}
	for _, v := range []any{nil, 1, -1, 1.5, float32(2.5), "s", []byte("b"), true, uint64(math.MaxUint64),
		[]any{1, "a", nil}, map[string]any{"a": map[string]any{"b": []any{1.5}}},
		map[int]any{1: 2}, time.Unix(1, 2), time.Unix(1<<40, 999999999),
		struct {
			A int    `json:"a"`
			B []byte `json:"b"`
		}{1, []byte{2}}} {
		data, err := encodeMsgpack(v)
		if err != nil {
			t.Fatal(err)
		}
		checkDifferential(t, data)
	}
}

// FuzzMsgpackDifferential checks decodeMsgpack, the strict hand-written
// reader, against github.com/vmihailenco/msgpack/v5 on the same bytes: both
// succeed with structurally equal values, or both fail (except for
// timestamps with out-of-range nanoseconds, which only decodeMsgpack
// refuses).
func FuzzMsgpackDifferential(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add(s)
	}
	f.Fuzz(checkDifferential)
}
