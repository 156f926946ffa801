package checkpoint

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fastEncodeStruct is a struct value, outside the fast path.
type fastEncodeStruct struct {
	A int `json:"a"`
	B any `json:"b,omitempty"`
}

// namedString is a string type of its own, outside the fast path.
type namedString string

// checkSameEncoding fails unless encodeMsgpackFast and encodeMsgpack write
// the bytes of encodeMsgpackReflect for v, or all three refuse it with the
// same error.
func checkSameEncoding(t *testing.T, v any) []byte {
	t.Helper()
	want, wantErr := encodeMsgpackReflect(v)
	fast, ok := encodeMsgpackFast(v)
	got, err := encodeMsgpack(v)
	if wantErr != nil {
		if ok || err == nil || err.Error() != wantErr.Error() {
			t.Fatalf("reference fails with %v; fast ok=%v %x; encodeMsgpack %x, %v", wantErr, ok, fast, got, err)
		}
		return nil
	}
	if !ok || !bytes.Equal(fast, want) {
		t.Fatalf("encodeMsgpackFast(%#v) = %x, %v;\nreference                  %x", v, fast, ok, want)
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("encodeMsgpack(%#v) = %x, %v;\nreference              %x", v, got, err, want)
	}
	return want
}

// fastEncodeCases covers every format the fast path chooses, at its
// boundaries, and values outside it.
func fastEncodeCases() map[string]any {
	signalling32 := math.Float32frombits(0x7f800001)
	signalling64 := math.Float64frombits(0x7ff0000000000001)
	cases := map[string]any{
		"nil in list":                    []any{nil},
		"true":                           true,
		"false":                          false,
		"empty string":                   "",
		"non-ASCII":                      "héllo, 世界 🌍",
		"invalid UTF-8 string":           "\xff\xfe",
		"float64 zero":                   0.0,
		"float64 negative zero":          math.Copysign(0, -1),
		"float64 1.5":                    1.5,
		"float64 integral":               3.0,
		"float64 NaN":                    math.NaN(),
		"float64 signalling NaN":         signalling64,
		"float64 +Inf":                   math.Inf(1),
		"float64 -Inf":                   math.Inf(-1),
		"float64 max":                    math.MaxFloat64,
		"float64 smallest":               math.SmallestNonzeroFloat64,
		"float32 1.5":                    float32(1.5),
		"float32 integral":               float32(2),
		"float32 NaN":                    float32(math.NaN()),
		"float32 +Inf":                   float32(math.Inf(1)),
		"float32 signalling NaN":         signalling32,
		"float32 signalling NaN in list": []any{signalling32},
		"float32 signalling NaN in map":  map[string]any{"f": signalling32},
		"float32 in list":                []any{float32(0.1), float32(-3)},
		"duration":                       time.Duration(-90 * time.Second),
		"duration in list":               []any{time.Hour},
		"nil bytes in list":              []any{[]byte(nil)},
		"empty bytes in list":            []any{[]byte{}},
		"bytes in map":                   map[string]any{"b": []byte{0, 1, 2}},
		"nil list":                       []any(nil),
		"empty list":                     []any{},
		"nil map":                        map[string]any(nil),
		"empty map":                      map[string]any{},
		"nil list in map":                map[string]any{"l": []any(nil), "m": map[string]any(nil)},
		"nil strings":                    []string(nil),
		"strings":                        []string{"b", "", "a"},
		"nil string map":                 map[string]string(nil),
		"string map":                     map[string]string{"z": "1", "a": "2", "é": "3", "": "4"},
		"sorted keys": map[string]any{"b": 1, "a": 2, "B": 3, "": 4, "ab": 5, "aa": 6, "a\x00": 7,
			"é": 8, "e": 9, "世": 10, "🌍": 11, "\xff": 12, "z": 13},
		"nested": map[string]any{"messages": []any{
			map[string]any{"type": "human", "id": "msg-1", "content": strings.Repeat("x", 200)},
			map[string]any{"type": "ai", "id": "msg-2", "content": "", "extra": []any{1, "a", nil, map[string]any{}}},
		}, "rev": int64(7)},
		"deep": []any{[]any{[]any{map[string]any{"a": []any{map[string]any{"b": []any{}}}}}}},
		// Outside the fast path.
		"struct":            fastEncodeStruct{A: 1, B: []any{"x"}},
		"struct in list":    []any{fastEncodeStruct{A: -1}, &fastEncodeStruct{A: 2}},
		"struct in map":     map[string]any{"s": fastEncodeStruct{B: map[string]any{"b": 1, "a": 2}}},
		"time":              time.Unix(1700000000, 5).UTC(),
		"time in list":      []any{time.Unix(1, 2), time.Unix(1<<40, 999999999)},
		"time in map":       map[string]any{"t": time.Unix(-1, 0)},
		"named string":      namedString("n"),
		"named in list":     []any{namedString("n")},
		"int slice":         []int{1, -1, 300},
		"int map":           map[int]any{1: "a"},
		"bool map":          map[string]bool{"b": true, "a": false},
		"nil pointer":       []any{(*int)(nil), map[string]any{"p": (*string)(nil)}},
		"pointer":           map[string]any{"p": new(int)},
		"byte array":        [3]byte{1, 2, 3},
		"float32 slice":     []float32{signalling32},
		"any map in struct": []any{fastEncodeStruct{B: map[string]any{"z": 1, "y": []any{2}}}},
	}
	for _, n := range []int{31, 32, 255, 256, 65535, 65536} {
		cases["string len "+itoa(int64(n))] = strings.Repeat("s", n)
		cases["bytes len "+itoa(int64(n))] = []any{bytes.Repeat([]byte{7}, n)}
		cases["key len "+itoa(int64(n))] = map[string]any{strings.Repeat("k", n): n}
		cases["non-ASCII string len "+itoa(int64(n))] = strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
	}
	for _, n := range []int{15, 16, 65535, 65536} {
		list := make([]any, n)
		m := make(map[string]any, n)
		sm := make(map[string]string, n)
		ss := make([]string, n)
		for i := range n {
			list[i] = i
			m[itoa(int64(i))] = i
			sm[itoa(int64(i))] = "v"
			ss[i] = "s"
		}
		cases["list len "+itoa(int64(n))] = list
		cases["map len "+itoa(int64(n))] = m
		cases["string map len "+itoa(int64(n))] = sm
		cases["strings len "+itoa(int64(n))] = ss
	}
	for _, n := range intBoundaries() {
		name := "int " + itoa(n)
		cases[name+" int64"] = n
		cases[name+" int"] = int(n)
		cases[name+" in list"] = []any{n, int(n)}
		if n == int64(int8(n)) {
			cases[name+" int8"] = []any{int8(n), map[string]any{"v": int8(n)}}
		}
		if n == int64(int16(n)) {
			cases[name+" int16"] = []any{int16(n), map[string]any{"v": int16(n)}}
		}
		if n == int64(int32(n)) {
			cases[name+" int32"] = []any{int32(n), map[string]any{"v": int32(n)}}
		}
		if n >= 0 {
			u := uint64(n)
			cases[name+" uint"] = []any{uint(u), u, map[string]any{"v": uint(u), "w": u}}
			if u <= math.MaxUint8 {
				cases[name+" uint8"] = []any{uint8(u), map[string]any{"v": uint8(u)}}
			}
			if u <= math.MaxUint16 {
				cases[name+" uint16"] = []any{uint16(u), map[string]any{"v": uint16(u)}}
			}
			if u <= math.MaxUint32 {
				cases[name+" uint32"] = []any{uint32(u), map[string]any{"v": uint32(u)}}
			}
		}
	}
	cases["uint64 max"] = uint64(math.MaxUint64)
	cases["uint64 above int64"] = []any{uint64(1 << 63), uint(math.MaxUint64)}
	return cases
}

// intBoundaries are the integers at and beside every width boundary of
// MessagePack's integer formats.
func intBoundaries() []int64 {
	var ns []int64
	for _, b := range []int64{0, 127, 255, math.MaxInt16, math.MaxUint16, math.MaxInt32, math.MaxUint32,
		-32, math.MinInt8, math.MinInt16, math.MinInt32} {
		ns = append(ns, b-1, b, b+1)
	}
	return append(ns, math.MaxInt64, math.MaxInt64-1, math.MinInt64, math.MinInt64+1)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestFastEncodeSameBytes(t *testing.T) {
	for name, v := range fastEncodeCases() {
		t.Run(name, func(t *testing.T) {
			data := checkSameEncoding(t, v)
			if data == nil {
				t.Fatal("reference refuses the value")
			}
			if _, err := decodeMsgpack(string(data)); err != nil {
				t.Fatalf("decodeMsgpack: %v", err)
			}
		})
	}
}

// TestFastEncodeBuffers: a value's encoding is its own, whether its buffer
// was pooled (copied out) or too large to pool (handed over): encoding
// other values after it changes none of its bytes, and both sizes encode as
// the reference does.
func TestFastEncodeBuffers(t *testing.T) {
	list := func(n int, tag string) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"id": tag + itoa(int64(i)), "content": strings.Repeat(tag, 200)}
		}
		return out
	}
	for _, n := range []int{10, 4000, 50000} { // 2 KB, about 1 MB (pooled), over 8 MiB (handed over)
		t.Run(itoa(int64(n)), func(t *testing.T) {
			v := list(n, "a")
			keep := string(checkSameEncoding(t, v))
			first, ok := encodeMsgpackFast(v)
			if !ok || string(first) != keep {
				t.Fatal("the fast path encodes the value otherwise")
			}
			for _, other := range []any{list(n, "b"), list(10, "c"), "x"} {
				if _, ok := encodeMsgpackFast(other); !ok {
					t.Fatal("fast path refused a plain value")
				}
			}
			if string(first) != keep {
				t.Fatalf("%d messages: the encoding changed after others were encoded", n)
			}
		})
	}
}

func TestFastEncodeErrors(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	cyclicList := []any{nil}
	cyclicList[0] = cyclicList
	type node struct{ Next *node }
	loop := &node{}
	loop.Next = loop
	for name, v := range map[string]any{
		"channel":           make(chan int),
		"func":              func() {},
		"complex":           complex(1, 2),
		"channel in map":    map[string]any{"a": 1, "c": make(chan int)},
		"channel in list":   []any{1, make(chan int)},
		"cyclic map":        cyclic,
		"cyclic list":       cyclicList,
		"pointer loop":      []any{loop},
		"too deep and chan": []any{make(chan int), nest(maxReflectDepth/2 + 1)},
		"chan in struct":    []any{fastEncodeStruct{B: make(chan int)}},
	} {
		t.Run(name, func(t *testing.T) {
			if data := checkSameEncoding(t, v); data != nil {
				t.Fatalf("encoded as %x", data)
			}
		})
	}
}

// nest returns n []any, one inside the other, around a struct.
func nest(n int) any {
	var v any = fastEncodeStruct{A: 1}
	for range n {
		v = []any{v}
	}
	return v
}

// TestFastEncodeDepth checks that the fast path accepts and refuses the
// nesting checkEncodable does, around its limit.
func TestFastEncodeDepth(t *testing.T) {
	limit := maxReflectDepth / 2
	for _, n := range []int{limit - 2, limit - 1, limit, limit + 1, limit + 2} {
		checkSameEncoding(t, nest(n))
		var m any = "leaf"
		for range n {
			m = map[string]any{"k": m}
		}
		checkSameEncoding(t, m)
	}
}

// fuzzValue builds a value from fuzz input, of the types of the fast path
// and a few outside it.
type fuzzValue struct{ in []byte }

func (g *fuzzValue) byte() byte {
	if len(g.in) == 0 {
		return 0
	}
	c := g.in[0]
	g.in = g.in[1:]
	return c
}

func (g *fuzzValue) uint64() uint64 {
	var b [8]byte
	n := copy(b[:], g.in)
	g.in = g.in[n:]
	return binary.BigEndian.Uint64(b[:])
}

// str is short text from the input, or a string at a length boundary.
func (g *fuzzValue) str() string {
	c := g.byte()
	if c >= 0xf8 {
		n := []int{31, 32, 255, 256, 65535, 65536, 0, 1}[c&7]
		return strings.Repeat(string(rune('a'+g.byte()%26)), n)
	}
	n := min(int(c%40), len(g.in))
	s := string(g.in[:n])
	g.in = g.in[n:]
	return s
}

func (g *fuzzValue) value(depth int) any {
	op := g.byte()
	if depth > 6 {
		op %= 20 // scalars only
	}
	n := g.uint64()
	switch op % 32 {
	case 0:
		return nil
	case 1:
		return n&1 == 1
	case 2:
		return int64(n)
	case 3:
		return int(n)
	case 4:
		return int8(n)
	case 5:
		return int16(n)
	case 6:
		return int32(n)
	case 7:
		return n
	case 8:
		return uint(n)
	case 9:
		return uint8(n)
	case 10:
		return uint16(n)
	case 11:
		return uint32(n)
	case 12:
		return math.Float32frombits(uint32(n))
	case 13:
		return math.Float64frombits(n)
	case 14, 15:
		return g.str()
	case 16:
		switch n % 3 {
		case 0:
			return []byte(nil)
		case 1:
			return []byte{}
		}
		return []byte(g.str())
	case 17:
		return time.Duration(n)
	case 18:
		// Small integers, the common case, by their sign.
		return int64(int8(n))
	case 19:
		return namedString(g.str())
	case 20, 21, 22:
		if n%17 == 0 {
			return []any(nil)
		}
		list := make([]any, n%20)
		for i := range list {
			list[i] = g.value(depth + 1)
		}
		return list
	case 23, 24, 25:
		if n%17 == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range n % 20 {
			m[g.str()] = g.value(depth + 1)
		}
		return m
	case 26:
		if n%17 == 0 {
			return []string(nil)
		}
		ss := make([]string, n%20)
		for i := range ss {
			ss[i] = g.str()
		}
		return ss
	case 27:
		if n%17 == 0 {
			return map[string]string(nil)
		}
		m := map[string]string{}
		for range n % 20 {
			m[g.str()] = g.str()
		}
		return m
	case 28:
		return fastEncodeStruct{A: int(n), B: g.value(depth + 1)}
	case 29:
		return time.Unix(int64(n>>34), int64(n%1e9))
	case 30:
		return []int{int(n), int(int8(n))}
	}
	return &fastEncodeStruct{A: int(int16(n))}
}

// FuzzFastEncode checks encodeMsgpackFast against the reference
// encodeMsgpackReflect on values built from the input, and that
// decodeMsgpack reads what they write.
func FuzzFastEncode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{20, 3, 0, 0, 0, 0, 0, 0, 0, 23, 0, 0, 0, 0, 0, 0, 0, 3, 2, 'a', 'b', 14})
	f.Add([]byte{23, 0, 0, 0, 0, 0, 0, 0, 5, 0xf9, 1, 12, 0x7f, 0x80, 0, 1, 0, 0, 0, 0})
	f.Add([]byte{20, 0, 0, 0, 0, 0, 0, 0, 2, 12, 0, 0, 0, 0, 0x7f, 0x80, 0, 1, 28, 1, 2})
	f.Add([]byte{2, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{7, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(bytes.Repeat([]byte{20, 0, 0, 0, 0, 0, 0, 0, 1}, 10))
	f.Fuzz(func(t *testing.T, in []byte) {
		g := &fuzzValue{in: in}
		v := g.value(0)
		data := checkSameEncoding(t, v)
		if data == nil {
			return
		}
		if _, err := decodeMsgpack(string(data)); err != nil {
			t.Fatalf("decodeMsgpack(%x): %v", data, err)
		}
		if !hasFloat32(v) {
			// Decoding normalises every other type without changing
			// its encoding.
			back, _ := decodeMsgpack(string(data))
			checkSameEncoding(t, back)
			if again, _ := encodeMsgpackFast(back); !bytes.Equal(again, data) {
				t.Fatalf("re-encoding the decoded %x gives %x", data, again)
			}
		}
	})
}

// hasFloat32 reports whether v holds a float32, which decodes as a float64.
func hasFloat32(v any) bool {
	switch x := v.(type) {
	case float32:
		return true
	case []any:
		for _, e := range x {
			if hasFloat32(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasFloat32(e) {
				return true
			}
		}
	case fastEncodeStruct:
		return hasFloat32(x.B)
	}
	return false
}
