package checkpoint

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMsgpackDecodeEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want any
	}{
		{"negative fixint", []byte{0xff}, int64(-1)},
		{"int8", []byte{0xd0, 0x80}, int64(-128)},
		{"int16", []byte{0xd1, 0xff, 0xfe}, int64(-2)},
		{"int32", []byte{0xd2, 0x80, 0, 0, 0}, int64(math.MinInt32)},
		{"uint64 above MaxInt64", []byte{0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0}, uint64(1 << 63)},
		{"uint64 fitting int64", []byte{0xcf, 0, 0, 0, 0, 0, 0, 0, 9}, int64(9)},
		{"float32", []byte{0xca, 0x3f, 0xc0, 0, 0}, 1.5},
		{"str8", []byte{0xd9, 2, 'h', 'i'}, "hi"},
		{"str8 key", []byte{0x81, 0xd9, 1, 'k', 0x30}, map[string]any{"k": int64(48)}},
		{"str16 key", []byte{0x81, 0xda, 0, 1, 'k', 0xa1, 'v'}, map[string]any{"k": "v"}},
		{"empty string", []byte{0xa0}, ""},
		{"empty bin", []byte{0xc4, 0}, []byte{}},
		{"repeated short strings", []byte{0x93, 0xa2, 'a', 'i', 0xa2, 'a', 'i', 0xa2, 'i', 'a'}, []any{"ai", "ai", "ia"}},
		{"invalid utf8 kept", []byte{0xa1, 0xff}, "\xff"},
		{"bin8", []byte{0xc4, 1, 7}, []byte{7}},
		{"array16", []byte{0xdc, 0, 2, 1, 2}, []any{int64(1), int64(2)}},
		{"int key", []byte{0x81, 0x01, 0xa1, 'a'}, map[string]any{"1": "a"}},
		{"bin key", []byte{0x81, 0xc4, 1, 'k', 0xc3}, map[string]any{"k": true}},
		{"nil key", []byte{0x81, 0xc0, 0x01}, map[string]any{"<nil>": int64(1)}},
		{"array key", []byte{0x81, 0x92, 0x01, 0x02, 0x03}, map[string]any{"[1 2]": int64(3)}},
		{"duplicate key last wins", []byte{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02}, map[string]any{"a": int64(2)}},
		{"timestamp32", []byte{0xd6, 0xff, 0, 0, 0, 10}, time.Unix(10, 0).UTC()},
		{"max depth", []byte(strings.Repeat("\x91", maxDepth) + "\xc0"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MsgpackSerializer{}.LoadsTyped(TagMsgpack, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "max depth" {
				// The deepest decodable value encodes again with both.
				for _, ser := range serializers {
					typ, data, err := ser.s.DumpsTyped(got)
					if err != nil {
						t.Fatalf("%s: %v", ser.name, err)
					}
					if _, err := ser.s.LoadsTyped(typ, data); err != nil {
						t.Fatalf("%s: %v", ser.name, err)
					}
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func FuzzMsgpackLoads(f *testing.F) {
	fuzzSeeds(f, MsgpackSerializer{})
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		fuzzLoads(t, MsgpackSerializer{}, typ, data)
	})
}

func ExampleMsgpackSerializer() {
	var s MsgpackSerializer
	typ, data, err := s.DumpsTyped(map[string]any{"step": 1, "ok": true})
	fmt.Println(typ, fmt.Sprintf("%x", data), err)
	v, err := s.LoadsTyped(typ, data)
	fmt.Printf("%#v %v\n", v, err)

	typ, data, _ = s.DumpsTyped(DeltaSnapshot{Value: []byte("raw")})
	v, _ = s.LoadsTyped(typ, data)
	fmt.Printf("%s %q %#v\n", typ, data, v)
	// Output:
	// msgpack 82a26f6bc3a47374657001 <nil>
	// map[string]interface {}{"ok":true, "step":1} <nil>
	// delta/bytes "raw" checkpoint.DeltaSnapshot{Value:[]uint8{0x72, 0x61, 0x77}}
}
