package checkpoint

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestSerializerDumpErrors(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	type node struct{ Next *node }
	loop := &node{}
	loop.Next = loop
	tests := []struct {
		name   string
		in     any
		onlyJS bool
	}{
		{name: "channel", in: make(chan int)},
		{name: "func", in: func() {}},
		{name: "channel in map", in: map[string]any{"c": make(chan int)}},
		{name: "nested delta", in: DeltaSnapshot{Value: DeltaSnapshot{Value: 1}}},
		{name: "nested delta pointer", in: DeltaSnapshot{Value: &DeltaSnapshot{}}},
		{name: "cyclic map", in: cyclic},
		{name: "pointer loop", in: loop},
		{name: "NaN", in: math.NaN(), onlyJS: true},
		{name: "infinity in slice", in: []any{math.Inf(1)}, onlyJS: true},
	}
	for _, ser := range serializers {
		for _, tt := range tests {
			if tt.onlyJS && ser.tag != TagJSON {
				continue
			}
			t.Run(ser.name+"/"+tt.name, func(t *testing.T) {
				typ, data, err := ser.s.DumpsTyped(tt.in)
				if !errors.Is(err, ErrSerialization) {
					t.Fatalf("DumpsTyped = %q, %x, %v; want ErrSerialization", typ, data, err)
				}
			})
		}
	}
}

func TestSerializerLoadErrors(t *testing.T) {
	_, mp, _ := MsgpackSerializer{}.DumpsTyped(map[string]any{"key": []any{1, "value"}})
	_, js, _ := JSONSerializer{}.DumpsTyped(map[string]any{"key": []any{1, "value"}})
	tests := []struct {
		name string
		typ  string
		data []byte
	}{
		{"unknown tag", "pickle", []byte{0x01}},
		{"empty tag", "", nil},
		{"upper-case tag", "MSGPACK", []byte{0x01}},
		{"nested delta", "delta/delta/msgpack", []byte{0x01}},
		{"nested delta null", "delta/delta/null", nil},
		{"bare delta", "delta/", nil},
		{"null with data", TagNull, []byte{0xc0}},
		{"delta null with data", "delta/null", []byte("x")},
		{"msgpack empty", TagMsgpack, nil},
		{"msgpack truncated", TagMsgpack, mp[:len(mp)-1]},
		{"msgpack truncated header", TagMsgpack, mp[:1]},
		{"msgpack trailing", TagMsgpack, append(append([]byte{}, mp...), 0x01)},
		{"msgpack invalid code", TagMsgpack, []byte{0xc1}},
		{"msgpack huge str", TagMsgpack, []byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}},
		{"msgpack huge bin", TagMsgpack, []byte{0xc6, 0x7f, 0xff, 0xff, 0xff}},
		{"msgpack huge array", TagMsgpack, []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}},
		{"msgpack huge map", TagMsgpack, []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0}},
		{"msgpack map missing value", TagMsgpack, []byte{0x81, 0xa1, 'k'}},
		{"msgpack unknown ext", TagMsgpack, []byte{0xd4, 0x05, 0x00}},
		{"msgpack bad timestamp size", TagMsgpack, []byte{0xd5, 0xff, 0x00, 0x00}},
		{"msgpack bad timestamp nanos", TagMsgpack, []byte{0xc7, 12, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"msgpack too deep", TagMsgpack, []byte(strings.Repeat("\x91", maxDepth+1) + "\xc0")},
		{"json empty", TagJSON, nil},
		{"json whitespace only", TagJSON, []byte("  ")},
		{"json truncated", TagJSON, js[:len(js)-1]},
		{"json trailing", TagJSON, append(append([]byte{}, js...), []byte(" 1")...)},
		{"json trailing brace", TagJSON, []byte("{}}")},
		{"json two values", TagJSON, []byte("1 2")},
		{"json garbage", TagJSON, []byte("nul")},
		{"json number out of range", TagJSON, []byte("1e400")},
		{"json too deep", TagJSON, []byte(strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1))},
		{"delta json corrupted", "delta/json", []byte("{")},
	}
	for _, ser := range serializers {
		for _, tt := range tests {
			t.Run(ser.name+"/"+tt.name, func(t *testing.T) {
				v, err := ser.s.LoadsTyped(tt.typ, tt.data)
				if !errors.Is(err, ErrSerialization) {
					t.Fatalf("LoadsTyped = %#v, %v; want ErrSerialization", v, err)
				}
			})
		}
	}
}
