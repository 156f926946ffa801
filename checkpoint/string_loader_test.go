package checkpoint

import (
	"fmt"
	"strings"
	"testing"
)

// strict formats a value with its types, for comparisons that tell int64
// from float64 and []byte{} from []byte(nil) (fmt sorts map keys).
func strict(v any) string { return fmt.Sprintf("%#v", v) }

// checkStringLoader fails when LoadsTypedString and LoadsTyped of the same
// bytes disagree, on the value (strictly) or on failing.
func checkStringLoader(t *testing.T, typ string, data []byte) {
	t.Helper()
	for _, ser := range serializers {
		want, wantErr := ser.s.LoadsTyped(typ, data)
		got, err := ser.s.(StringLoader).LoadsTypedString(typ, string(data))
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s %q %x: LoadsTypedString error %v, LoadsTyped error %v", ser.name, typ, data, err, wantErr)
		}
		if strict(got) != strict(want) {
			t.Fatalf("%s %q %x: LoadsTypedString = %s, LoadsTyped = %s", ser.name, typ, data, strict(got), strict(want))
		}
	}
}

func TestLoadsTypedString(t *testing.T) {
	for _, data := range differentialSeeds {
		checkStringLoader(t, TagMsgpack, data)
		checkStringLoader(t, TagDeltaPrefix+TagMsgpack, data)
	}
	for _, in := range []string{`{"a":[1,2.5,"x",null,true]}`, `18446744073709551615`, `"\u00e9\ud800"`, `[1,`, `{} x`} {
		checkStringLoader(t, TagJSON, []byte(in))
	}
	checkStringLoader(t, TagBytes, nil)
	checkStringLoader(t, TagBytes, []byte{0, 1})
	checkStringLoader(t, TagNull, nil)
	checkStringLoader(t, TagNull, []byte{1})
	checkStringLoader(t, "nope", nil)
}

// bytesOnly is a Serializer that is not a StringLoader.
type bytesOnly struct{ MsgpackSerializer }

func (bytesOnly) LoadsTyped(typ string, data []byte) (any, error) {
	return MsgpackSerializer{}.LoadsTyped(typ, data)
}

func TestLoadString(t *testing.T) {
	typ, data, err := MsgpackSerializer{}.DumpsTyped(map[string]any{"a": []any{int64(1), "b"}})
	if err != nil {
		t.Fatal(err)
	}
	var user Serializer = struct{ Serializer }{bytesOnly{}}
	if _, ok := user.(StringLoader); ok {
		t.Fatal("the test serializer must not be a StringLoader")
	}
	for _, ser := range []Serializer{MsgpackSerializer{}, JSONSerializer{}, user} {
		got, err := LoadString(ser, typ, string(data))
		if err != nil {
			t.Fatalf("%T: %v", ser, err)
		}
		if want := `map[string]interface {}{"a":[]interface {}{1, "b"}}`; strict(got) != want {
			t.Fatalf("%T: %s, want %s", ser, strict(got), want)
		}
	}
}

// TestMsgpackDecodeAllocs pins the allocations of the decoder on a list of
// messages: per message its map (2 allocations) and the boxes of its three
// string values (an any holding a string); the keys and the string bytes
// cost nothing.
func TestMsgpackDecodeAllocs(t *testing.T) {
	const n = 50
	msgs := make([]any, n)
	for i := range msgs {
		msgs[i] = map[string]any{"type": []string{"human", "ai"}[i%2], "id": fmt.Sprintf("msg-%06d", i), "content": strings.Repeat("x", 200)}
	}
	_, data, err := MsgpackSerializer{}.DumpsTyped(msgs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := (MsgpackSerializer{}).LoadsTypedString(TagMsgpack, s); err != nil {
			t.Fatal(err)
		}
	})
	if limit := float64(5*n + 8); allocs > limit {
		t.Errorf("decoding %d messages: %.0f allocations, want at most %.0f", n, allocs, limit)
	}
}

// FuzzLoadsTypedString checks that LoadsTypedString decodes exactly what
// LoadsTyped decodes from the same bytes (FuzzMsgpackDifferential checks
// the reader itself against vmihailenco/msgpack/v5).
func FuzzLoadsTypedString(f *testing.F) {
	fuzzSeeds(f, MsgpackSerializer{})
	fuzzSeeds(f, JSONSerializer{})
	f.Fuzz(checkStringLoader)
}
