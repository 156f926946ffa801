package checkpoint

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// fastEncoder writes the MessagePack encoding of the dynamic values channel
// values are made of (nil, bool, integers, floats, strings, []byte, []any,
// map[string]any, []string, map[string]string, time.Duration) by appending
// to one buffer, without reflection. It writes exactly the bytes
// encodeMsgpackReflect writes: the same formats (integers in their smallest
// form, float32 and float64 kept apart, str8/16/32 and bin8/16/32 by length,
// array and map headers by count) and map keys in sort.Strings order. It
// validates as it goes, as checkEncodable does, counting depth the same way;
// any other value is checked with checkDepth and written by a msgpack
// Encoder configured as encodeMsgpackReflect's, into the same buffer.
//
// It is pooled: buf and the scratch stacks are reused from one value to the
// next.
type fastEncoder struct {
	buf []byte
	// entries and keys are stacks of scratch space: each map being
	// written (a map[string]any of more than smallMap entries, a
	// map[string]string) pushes its entries or keys there to sort them, and
	// pops them when done, so nested maps share one slice.
	entries []mapEntry
	keys    []string
	// enc writes the values outside the fast path into buf; made on first
	// use.
	enc *msgpack.Encoder
}

// Pooled buffers above these capacities are dropped instead of kept (a
// larger encoding is handed over as it is), so that one huge value does not
// pin its memory (sync.Pool drops what two GCs found unused). 8 MiB keeps
// the buffer of a state of a few MB, which would otherwise grow again from
// 4 KB on every Put, copying about 5 times its size.
const (
	maxPooledBuf     = 8 << 20
	maxPooledScratch = 1 << 12
)

var fastEncoderPool = sync.Pool{New: func() any {
	return &fastEncoder{buf: make([]byte, 0, 4096), entries: make([]mapEntry, 0, 64)}
}}

// mapEntry is a key and value of a map[string]any.
type mapEntry struct {
	key   string
	value any
}

// errFastPath makes encodeMsgpack fall back to encodeMsgpackReflect, which
// then reports the error (the same walk, in the same order, as before).
var errFastPath = errors.New("checkpoint: value left to the reflecting encoder")

// encodeMsgpackFast encodes v as encodeMsgpackReflect does; ok is false when
// v is not encodable (too deep, cyclic, or refused by msgpack), and the
// caller then runs encodeMsgpackReflect for its error.
func encodeMsgpackFast(v any) (data []byte, ok bool) {
	e := fastEncoderPool.Get().(*fastEncoder)
	err := e.value(v, 0, false)
	switch {
	case err != nil:
		e.enc = nil // its state after a failure is not worth trusting
		e.buf = e.buf[:0]
	case cap(e.buf) > maxPooledBuf:
		// A buffer too large to pool is handed over as it is, not copied.
		data = e.buf
		e.buf = make([]byte, 0, 4096)
	default:
		data = make([]byte, len(e.buf))
		copy(data, e.buf)
		e.buf = e.buf[:0]
	}
	// Each map pops what it pushed, except when it failed.
	clear(e.entries)
	e.entries = e.entries[:0]
	clear(e.keys)
	e.keys = e.keys[:0]
	if cap(e.buf) <= maxPooledBuf && cap(e.entries) <= maxPooledScratch && cap(e.keys) <= maxPooledScratch {
		fastEncoderPool.Put(e)
	}
	return data, err == nil
}

// Write and WriteByte let the msgpack Encoder append to buf.
func (e *fastEncoder) Write(p []byte) (int, error) {
	e.buf = append(e.buf, p...)
	return len(p), nil
}

func (e *fastEncoder) WriteByte(c byte) error {
	e.buf = append(e.buf, c)
	return nil
}

// value appends v at depth, counted as checkDynamic counts it. inSlice tells
// that v is an element of an []any, which msgpack encodes through
// reflection rather than through Encoder.Encode: the two differ only for a
// float32, which reflection widens to float64 and back (quieting a
// signalling NaN), and for values outside the fast path.
func (e *fastEncoder) value(v any, depth int, inSlice bool) error {
	if depth > maxReflectDepth {
		return errFastPath
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, 0xc0)
	case string:
		e.str(x)
	case bool:
		if x {
			e.buf = append(e.buf, 0xc3)
		} else {
			e.buf = append(e.buf, 0xc2)
		}
	case int:
		e.int(int64(x))
	case int8:
		e.int(int64(x))
	case int16:
		e.int(int64(x))
	case int32:
		e.int(int64(x))
	case int64:
		e.int(x)
	case time.Duration:
		e.int(int64(x))
	case uint:
		e.uint(uint64(x))
	case uint8:
		e.uint(uint64(x))
	case uint16:
		e.uint(uint64(x))
	case uint32:
		e.uint(uint64(x))
	case uint64:
		e.uint(x)
	case float32:
		if inSlice {
			x = float32(float64(x))
		}
		e.buf = append(e.buf, 0xca)
		e.buf = binary.BigEndian.AppendUint32(e.buf, math.Float32bits(x))
	case float64:
		e.buf = append(e.buf, 0xcb)
		e.buf = binary.BigEndian.AppendUint64(e.buf, math.Float64bits(x))
	case []byte:
		if x == nil {
			e.buf = append(e.buf, 0xc0)
			break
		}
		e.binHeader(len(x))
		e.buf = append(e.buf, x...)
	case []any:
		if x == nil {
			e.buf = append(e.buf, 0xc0)
			break
		}
		e.arrayHeader(len(x))
		for _, el := range x {
			if err := e.value(el, depth+2, true); err != nil {
				return err
			}
		}
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, 0xc0)
			break
		}
		return e.mapAny(x, depth)
	case []string:
		if x == nil {
			e.buf = append(e.buf, 0xc0)
			break
		}
		e.arrayHeader(len(x))
		for _, s := range x {
			e.str(s)
		}
	case map[string]string:
		if x == nil {
			e.buf = append(e.buf, 0xc0)
			break
		}
		e.mapHeader(len(x))
		start := len(e.keys)
		for k := range x {
			e.keys = append(e.keys, k)
		}
		slices.Sort(e.keys[start:])
		for _, k := range e.keys[start:] {
			e.str(k)
			e.str(x[k])
		}
		clear(e.keys[start:])
		e.keys = e.keys[:start]
	default:
		return e.reflected(v, depth, inSlice)
	}
	return nil
}

// reflected validates and writes a value outside the fast path as
// checkDynamic and encodeMsgpackReflect would.
func (e *fastEncoder) reflected(v any, depth int, inSlice bool) error {
	rv := reflect.ValueOf(v)
	if err := checkDepth(rv, depth); err != nil {
		return err
	}
	if e.enc == nil {
		e.enc = newMsgpackEncoder(e)
	}
	if inSlice {
		return e.enc.EncodeValue(rv)
	}
	return e.enc.Encode(v)
}

// smallMap is the most entries a map[string]any may have to be sorted on
// the stack, where storing its keys and values needs no write barriers.
const smallMap = 8

// mapAny writes m, not nil, at depth, its entries sorted by key as
// sort.Strings sorts keys (they are distinct, so any correct sort gives the
// same order).
func (e *fastEncoder) mapAny(m map[string]any, depth int) error {
	e.mapHeader(len(m))
	if len(m) > smallMap {
		return e.mapAnyLarge(m, depth)
	}
	var local [smallMap]mapEntry
	es := local[:0]
	for k, v := range m {
		es = append(es, mapEntry{k, v})
	}
	for i := 1; i < len(es); i++ { // insertion sort
		for j := i; j > 0 && es[j].key < es[j-1].key; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
	for _, en := range es {
		e.str(en.key)
		if err := e.value(en.value, depth+2, false); err != nil {
			return err
		}
	}
	return nil
}

// mapAnyLarge is mapAny for maps of more than smallMap entries, which it
// sorts on the e.entries stack.
func (e *fastEncoder) mapAnyLarge(m map[string]any, depth int) error {
	start := len(e.entries)
	for k, v := range m {
		e.entries = append(e.entries, mapEntry{k, v})
	}
	end := len(e.entries)
	slices.SortFunc(e.entries[start:], func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	for i := start; i < end; i++ {
		// e.entries may move as nested maps push theirs.
		en := e.entries[i]
		e.str(en.key)
		if err := e.value(en.value, depth+2, false); err != nil {
			return err
		}
	}
	clear(e.entries[start:])
	e.entries = e.entries[:start]
	return nil
}

func (e *fastEncoder) str(s string) {
	switch n := len(s); {
	case n < 32:
		e.buf = append(e.buf, 0xa0|byte(n))
	case n < 256:
		e.buf = append(e.buf, 0xd9, byte(n))
	case n <= math.MaxUint16:
		e.buf = append(e.buf, 0xda, byte(n>>8), byte(n))
	default:
		e.buf = append(e.buf, 0xdb)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	}
	e.buf = append(e.buf, s...)
}

func (e *fastEncoder) binHeader(n int) {
	switch {
	case n < 256:
		e.buf = append(e.buf, 0xc4, byte(n))
	case n <= math.MaxUint16:
		e.buf = append(e.buf, 0xc5, byte(n>>8), byte(n))
	default:
		e.buf = append(e.buf, 0xc6)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	}
}

func (e *fastEncoder) arrayHeader(n int) { e.countHeader(n, 0x90, 0xdc, 0xdd) }

func (e *fastEncoder) mapHeader(n int) { e.countHeader(n, 0x80, 0xde, 0xdf) }

// countHeader writes the header of an array or map of n elements: fix (its
// fixarray or fixmap code) or'ed with n below 16, else c16 or c32 and n.
func (e *fastEncoder) countHeader(n int, fix, c16, c32 byte) {
	switch {
	case n < 16:
		e.buf = append(e.buf, fix|byte(n))
	case n <= math.MaxUint16:
		e.buf = append(e.buf, c16, byte(n>>8), byte(n))
	default:
		e.buf = append(e.buf, c32)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	}
}

// uint writes n in its smallest form, as msgpack's EncodeUint does.
func (e *fastEncoder) uint(n uint64) {
	switch {
	case n <= math.MaxInt8:
		e.buf = append(e.buf, byte(n))
	case n <= math.MaxUint8:
		e.buf = append(e.buf, 0xcc, byte(n))
	case n <= math.MaxUint16:
		e.buf = append(e.buf, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		e.buf = append(e.buf, 0xce)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	default:
		e.buf = append(e.buf, 0xcf)
		e.buf = binary.BigEndian.AppendUint64(e.buf, n)
	}
}

// int writes n in its smallest form, as msgpack's EncodeInt does: a
// non-negative n as an unsigned integer.
func (e *fastEncoder) int(n int64) {
	switch {
	case n >= 0:
		e.uint(uint64(n))
	case n >= -32:
		e.buf = append(e.buf, byte(n))
	case n >= math.MinInt8:
		e.buf = append(e.buf, 0xd0, byte(n))
	case n >= math.MinInt16:
		e.buf = append(e.buf, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		e.buf = append(e.buf, 0xd2)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	default:
		e.buf = append(e.buf, 0xd3)
		e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(n))
	}
}
