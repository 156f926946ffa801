package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestEncode(t *testing.T) {
	type point struct {
		Y int     `json:"y"`
		X float64 `json:"x"`
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `null`},
		{"bool", true, `true`},
		{"int", 1, `1`},
		{"int8", int8(1), `1`},
		{"uint", uint(1), `1`},
		{"float64 integral", 1.0, `1`},
		{"float32 integral", float32(1), `1`},
		{"json.Number 1.0", json.Number("1.0"), `1`},
		{"json.Number 1e2", json.Number("1e2"), `100`},
		{"negative zero", math.Copysign(0, -1), `0`},
		{"negative", -3, `-3`},
		{"min int64", int64(math.MinInt64), `-9223372036854775808`},
		{"max int64", int64(math.MaxInt64), `9223372036854775807`},
		{"max uint64", uint64(math.MaxUint64), `18446744073709551615`},
		{"2^63 as float", math.Exp2(63), `9223372036854775808`},
		{"2^64 as float", math.Exp2(64), `1.8446744073709552e+19`},
		{"fraction", 1.5, `1.5`},
		{"float32 fraction", float32(0.1), `0.10000000149011612`},
		{"small float", 1e-7, `1e-07`},
		{"large float", 1e300, `1e+300`},
		{"string", "a\"b\\c\n<&>", `"a\"b\\c\n<&>"`},
		{"nul byte", "a\x00b", `"a\u0000b"`},
		{"line separator", "\u2028", `"\u2028"`},
		{"invalid utf8", "a\xffb", "\"a\uFFFDb\""},
		{"sorted object", map[string]any{"b": 1, "a": []any{1.5, "x"}}, `{"a":[1.5,"x"],"b":1}`},
		{"nested maps", map[string]any{"z": map[string]any{"y": 1.0, "x": map[string]any{"b": 2, "a": 1}}},
			`{"z":{"x":{"a":1,"b":2},"y":1}}`},
		{"named map type", namedMap{"step": 2, "source": "loop"}, `{"source":"loop","step":2}`},
		{"map[string]string", map[string]string{"b": "2", "a": "1"}, `{"a":"1","b":"2"}`},
		{"typed map", map[string]float64{"b": 2.0, "a": 0.5}, `{"a":0.5,"b":2}`},
		{"int keys", map[int]string{10: "x", 9: "y"}, `{"10":"x","9":"y"}`},
		{"struct", point{Y: 2, X: 1.0}, `{"x":1,"y":2}`},
		{"struct pointer in map", map[string]any{"p": &point{X: 0.5}}, `{"p":{"x":0.5,"y":0}}`},
		{"typed slice", []float32{1, 2.5}, `[1,2.5]`},
		{"string slice", []string{"b", "a"}, `["b","a"]`},
		{"bytes", []byte("hi"), `"aGk="`},
		{"raw message", json.RawMessage(`{"b": 1.0, "a": 2}`), `{"a":2,"b":1}`},
		{"empty object", map[string]any{}, `{}`},
		{"empty array", []any{}, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("%s is not valid JSON", got)
			}
		})
	}
}

func TestEncodeEqualValues(t *testing.T) {
	groups := [][]any{
		{1, int8(1), int16(1), int32(1), int64(1), uint(1), uint8(1), uint16(1), uint32(1), uint64(1),
			1.0, float32(1), json.Number("1"), json.Number("1.0"), json.Number("10e-1")},
		{uint64(1 << 63), math.Exp2(63), json.Number("9223372036854775808")},
		{map[string]any{"a": 1, "b": []any{2.0}}, namedMap{"b": []int{2}, "a": 1.0},
			map[string]float64{"a": 1}, // differs: no "b"
		},
	}
	for gi, g := range groups {
		first, err := Encode(g[0])
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range g[1:] {
			got, err := Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			wantEqual := !(gi == 2 && i == 1)
			if bytes.Equal(got, first) != wantEqual {
				t.Errorf("group %d: %#v gives %s, %#v gives %s", gi, g[0], first, v, got)
			}
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["c"] = cyclic
	tests := []struct {
		name string
		in   any
	}{
		{"NaN", math.NaN()},
		{"+Inf", math.Inf(1)},
		{"-Inf float32 in map", map[string]any{"x": float32(math.Inf(-1))}},
		{"NaN in struct", struct{ F float64 }{math.NaN()}},
		{"channel", make(chan int)},
		{"func in slice", []any{func() {}}},
		{"complex", complex(1, 2)},
		{"cyclic", cyclic},
		{"bad json.Number", json.Number("0x10")},
		{"json.Number with spaces", json.Number(" 1")},
		{"empty json.Number", json.Number("")},
		{"json.Number out of range", json.Number("1e999")},
		{"colliding keys", map[string]any{"\xff": 1, "\xfe": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.in)
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("got %s, %v; want ErrUnsupported", got, err)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`1`, int64(1)},
		{`-0`, int64(0)},
		{`1.0`, 1.0},
		{`1e2`, 100.0},
		{`1E2`, 100.0},
		{`9223372036854775807`, int64(math.MaxInt64)},
		{`9223372036854775808`, uint64(1 << 63)},
		{`-9223372036854775809`, -9223372036854775809.0},
		{`123456789012345678901234567890`, 1.2345678901234568e29},
		{`1e-400`, 0.0},
		{` {"a":[1,2.5,"x",null,true],"b":{}} `,
			map[string]any{"a": []any{int64(1), 2.5, "x", nil, true}, "b": map[string]any{}}},
		{`"\u0000\ud800"`, "\x00\uFFFD"},
	}
	for _, tt := range tests {
		got, err := Decode([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{``, ` `, `{`, `1 2`, `{}x`, `[1,]`, `NaN`, `1e400`, `'a'`, `01`} {
		if got, err := Decode([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: got %#v, %v; want ErrMalformed", bad, got, err)
		}
	}
}

func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	v, err := Decode([]byte(deep))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(v)
	if err != nil || string(enc) != deep {
		t.Errorf("deep value: err %v, equal %v", err, string(enc) == deep)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`1`, `1.0`, `-0`, `1e2`, `"a\u0000"`, `{"b":1,"a":[1.5,"x"]}`,
		`9223372036854775808`, `18446744073709551616`, `1e-400`, "\"\xff\"", `[[[]]]`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		enc, err := Encode(v)
		if err != nil {
			t.Fatalf("decoded %#v does not encode: %v", v, err)
		}
		if !json.Valid(enc) {
			t.Fatalf("%q is not valid JSON", enc)
		}
		v2, err := Decode(enc)
		if err != nil {
			t.Fatalf("canonical %q does not decode: %v", enc, err)
		}
		enc2, err := Encode(v2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable: %q then %q", enc, enc2)
		}
	})
}

// namedMap is a map type Encode does not walk directly: it goes through
// encoding/json first and must give the same bytes.
type namedMap map[string]any
