package checkpoint

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

type serTestStruct struct {
	Name    string         `json:"name"`
	Count   int            `json:"count,omitempty"`
	Tags    []string       `json:"tags"`
	Inner   map[string]any `json:"inner"`
	Skipped string         `json:"-"`
	Packed  string         `msgpack:"packed" json:"js_packed"`
	hidden  int
}

var serializers = []struct {
	name string
	s    Serializer
	tag  string
}{
	{"msgpack", MsgpackSerializer{}, TagMsgpack},
	{"json", JSONSerializer{}, TagJSON},
}

func TestSerializerRoundTrip(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	tests := []struct {
		name    string
		in      any
		tag     string // "" means the serializer's own tag; "delta/" + "" likewise
		want    any
		wantMP  any // overrides want for msgpack when non-nil
		wantJS  any // overrides want for JSON when non-nil
		wantNil bool
	}{
		{name: "nil", in: nil, tag: TagNull, wantNil: true},
		{name: "true", in: true, want: true},
		{name: "false", in: false, want: false},
		{name: "int", in: 42, want: int64(42)},
		{name: "negative int8", in: int8(-5), want: int64(-5)},
		{name: "int16", in: int16(-300), want: int64(-300)},
		{name: "int32", in: int32(70000), want: int64(70000)},
		{name: "max int64", in: int64(math.MaxInt64), want: int64(math.MaxInt64)},
		{name: "min int64", in: int64(math.MinInt64), want: int64(math.MinInt64)},
		{name: "uint8", in: uint8(200), want: int64(200)},
		{name: "small uint64", in: uint64(7), want: int64(7)},
		{name: "max uint64", in: uint64(math.MaxUint64), want: uint64(math.MaxUint64)},
		{name: "float64", in: 1.5, want: 1.5},
		{name: "float32", in: float32(0.25), want: 0.25},
		{name: "negative float", in: -2.75e-10, want: -2.75e-10},
		{name: "integral float", in: 2.0, wantMP: 2.0, wantJS: int64(2)},
		{name: "string", in: "héllo \x00 <&>", want: "héllo \x00 <&>"},
		{name: "empty string", in: "", want: ""},
		{name: "bytes", in: []byte{0, 1, 0xff}, tag: TagBytes, want: []byte{0, 1, 0xff}},
		{name: "empty bytes", in: []byte{}, tag: TagBytes, want: []byte{}},
		{name: "array", in: []any{1, "a", nil, []any{true, 2.5}},
			want: []any{int64(1), "a", nil, []any{true, 2.5}}},
		{name: "typed slice", in: []int{1, 2}, want: []any{int64(1), int64(2)}},
		{name: "empty array", in: []any{}, want: []any{}},
		{name: "map", in: map[string]any{"a": 1, "b": map[string]any{"c": []any{"d"}}},
			want: map[string]any{"a": int64(1), "b": map[string]any{"c": []any{"d"}}}},
		{name: "typed map", in: map[string]int{"x": 3}, want: map[string]any{"x": int64(3)}},
		{name: "int keys", in: map[int]string{1: "a", -2: "b"}, want: map[string]any{"1": "a", "-2": "b"}},
		{name: "empty map", in: map[string]any{}, want: map[string]any{}},
		{name: "map with Value key", in: map[string]any{"Value": 1}, want: map[string]any{"Value": int64(1)}},
		{name: "struct", in: serTestStruct{Name: "n", Tags: []string{"t"}, Skipped: "s", Packed: "p", hidden: 3},
			wantMP: map[string]any{"name": "n", "tags": []any{"t"}, "inner": nil, "packed": "p"},
			wantJS: map[string]any{"name": "n", "tags": []any{"t"}, "inner": nil, "js_packed": "p"}},
		{name: "struct pointer", in: &serTestStruct{Name: "n", Count: 2},
			wantMP: map[string]any{"name": "n", "count": int64(2), "tags": nil, "inner": nil, "packed": ""},
			wantJS: map[string]any{"name": "n", "count": int64(2), "tags": nil, "inner": nil, "js_packed": ""}},
		{name: "nested bytes", in: map[string]any{"b": []byte("hi")},
			wantMP: map[string]any{"b": []byte("hi")}, wantJS: map[string]any{"b": "aGk="}},
		{name: "time", in: ts, wantMP: ts.UTC(), wantJS: "2024-05-06T07:08:09.123456789+01:00"},
		{name: "delta of nil", in: DeltaSnapshot{}, tag: "delta/null", want: DeltaSnapshot{}},
		{name: "delta of bytes", in: DeltaSnapshot{Value: []byte("raw")}, tag: "delta/bytes",
			want: DeltaSnapshot{Value: []byte("raw")}},
		{name: "delta of map", in: DeltaSnapshot{Value: map[string]any{"k": []any{1}}}, tag: "delta/",
			want: DeltaSnapshot{Value: map[string]any{"k": []any{int64(1)}}}},
		{name: "delta pointer", in: &DeltaSnapshot{Value: "s"}, tag: "delta/", want: DeltaSnapshot{Value: "s"}},
		{name: "delta in map is plain", in: map[string]any{"d": DeltaSnapshot{Value: 1}},
			want: map[string]any{"d": map[string]any{"Value": int64(1)}}},
		{name: "typed nil pointer", in: (*serTestStruct)(nil), wantNil: true},
	}
	for _, ser := range serializers {
		for _, tt := range tests {
			t.Run(ser.name+"/"+tt.name, func(t *testing.T) {
				typ, data, err := ser.s.DumpsTyped(tt.in)
				if err != nil {
					t.Fatalf("DumpsTyped: %v", err)
				}
				wantTag := tt.tag
				switch wantTag {
				case "":
					wantTag = ser.tag
				case TagDeltaPrefix:
					wantTag += ser.tag
				}
				if typ != wantTag {
					t.Errorf("tag = %q, want %q", typ, wantTag)
				}
				got, err := ser.s.LoadsTyped(typ, data)
				if err != nil {
					t.Fatalf("LoadsTyped(%q, %x): %v", typ, data, err)
				}
				want := tt.want
				if ser.tag == TagMsgpack && tt.wantMP != nil {
					want = tt.wantMP
				}
				if ser.tag == TagJSON && tt.wantJS != nil {
					want = tt.wantJS
				}
				if tt.wantNil {
					want = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got %#v, want %#v", got, want)
				}
				if _, isDelta := got.(DeltaSnapshot); isDelta != strings.HasPrefix(typ, TagDeltaPrefix) {
					t.Errorf("DeltaSnapshot-ness of %#v does not match tag %q", got, typ)
				}
			})
		}
	}
}

func TestSerializerNullAndBytesData(t *testing.T) {
	for _, ser := range serializers {
		typ, data, err := ser.s.DumpsTyped(nil)
		if err != nil || typ != TagNull || len(data) != 0 {
			t.Errorf("%s: DumpsTyped(nil) = %q, %x, %v", ser.name, typ, data, err)
		}
		in := []byte("abc")
		typ, data, err = ser.s.DumpsTyped(in)
		if err != nil || typ != TagBytes || string(data) != "abc" {
			t.Errorf("%s: DumpsTyped([]byte) = %q, %x, %v", ser.name, typ, data, err)
		}
		data[0] = 'X' // the result must not alias the input
		if string(in) != "abc" {
			t.Errorf("%s: DumpsTyped([]byte) aliases its input", ser.name)
		}
	}
}

// Each serializer reads what the other writes.
func TestSerializerCrossRead(t *testing.T) {
	in := map[string]any{"a": []any{int64(1), "x", 2.5, nil, true}}
	for _, w := range serializers {
		for _, r := range serializers {
			typ, data, err := w.s.DumpsTyped(DeltaSnapshot{Value: in})
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.s.LoadsTyped(typ, data)
			if err != nil {
				t.Fatalf("%s reading %s: %v", r.name, w.name, err)
			}
			if want := (DeltaSnapshot{Value: in}); !reflect.DeepEqual(got, want) {
				t.Errorf("%s reading %s: got %#v, want %#v", r.name, w.name, got, want)
			}
		}
	}
}

func fuzzSeeds(f *testing.F, s Serializer) {
	for _, v := range []any{nil, 1, -1, 1.5, "s", []byte("b"), true, uint64(math.MaxUint64),
		[]any{1, "a", nil}, map[string]any{"a": map[string]any{"b": []any{1.5}}},
		map[int]any{1: 2}, DeltaSnapshot{Value: []any{1}}, time.Unix(1, 2)} {
		typ, data, err := s.DumpsTyped(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(typ, data)
	}
	f.Add("delta/delta/msgpack", []byte{0x90})
	f.Add("msgpack", []byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add("json", []byte(`{"a":[1e400]}`))
}

func fuzzLoads(t *testing.T, s Serializer, typ string, data []byte) {
	v, err := s.LoadsTyped(typ, data)
	if err != nil {
		if !errors.Is(err, ErrSerialization) {
			t.Fatalf("error %v does not wrap ErrSerialization", err)
		}
		return
	}
	// What decodes re-encodes (except values JSON cannot hold) and decodes
	// to the same value.
	typ2, data2, err := s.DumpsTyped(v)
	if err != nil {
		return
	}
	v2, err := s.LoadsTyped(typ2, data2)
	if err != nil {
		t.Fatalf("re-encoded %#v as %q %x does not decode: %v", v, typ2, data2, err)
	}
	if typ2 == typ && !sameValue(v, v2, true) {
		t.Fatalf("round trip changed %#v into %#v", v, v2)
	}
}
