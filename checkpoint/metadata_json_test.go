package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// The canonical form itself is tested in internal/canonjson; these tests
// cover what package checkpoint adds: Matches and the sentinels.

func TestMetadataValueSentinels(t *testing.T) {
	for _, v := range []any{math.NaN(), make(chan int), Metadata{"f": func() {}}} {
		if _, err := EncodeMetadataValue(v); !errors.Is(err, ErrInvalidCheckpoint) {
			t.Errorf("EncodeMetadataValue(%T): err = %v, want ErrInvalidCheckpoint", v, err)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `1e400`} {
		if _, err := DecodeMetadataValue([]byte(bad)); !errors.Is(err, ErrSerialization) {
			t.Errorf("DecodeMetadataValue(%q): err = %v, want ErrSerialization", bad, err)
		}
		if _, err := DecodeMetadataString(bad); !errors.Is(err, ErrSerialization) {
			t.Errorf("DecodeMetadataString(%q): err = %v, want ErrSerialization", bad, err)
		}
	}
	// Metadata encodes as the map it is.
	a, errA := EncodeMetadataValue(Metadata{"b": 1, "a": json.Number("2.0")})
	b, errB := EncodeMetadataValue(map[string]any{"a": 2, "b": 1.0})
	if errA != nil || errB != nil || !bytes.Equal(a, b) || string(a) != `{"a":2,"b":1}` {
		t.Errorf("Metadata %s (%v), map %s (%v)", a, errA, b, errB)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	md := Metadata{"source": "loop", "step": -1, "parents": map[string]any{"": "id1"},
		"score": 0.25, "big": uint64(math.MaxUint64), "s": "a\xffb", "list": []any{1, 2.5}}
	enc, err := EncodeMetadataValue(md)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeMetadataValue(enc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeMetadataValue(dec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, again) {
		t.Errorf("re-encoding changed %s into %s", enc, again)
	}
	for _, in := range []string{string(enc), `"loop"`, `-1`, `null`} {
		want, _ := DecodeMetadataValue([]byte(in))
		if got, err := DecodeMetadataString(in); err != nil || strict(got) != strict(want) {
			t.Errorf("DecodeMetadataString(%s) = %s, %v; DecodeMetadataValue: %s", in, strict(got), err, strict(want))
		}
	}
	if ok, err := md.Matches(Metadata(dec.(map[string]any))); !ok || err != nil {
		t.Errorf("metadata does not match its own round trip: %v, %v", ok, err)
	}
}

func TestMetadataMatches(t *testing.T) {
	md := Metadata{
		"source": "loop", "step": 1, "score": 0.5, "none": nil,
		"parents": map[string]any{"": "a", "child": map[string]any{"x": []any{1, 2}}},
	}
	tests := []struct {
		name   string
		filter Metadata
		want   bool
	}{
		{"nil filter", nil, true},
		{"empty filter", Metadata{}, true},
		{"string", Metadata{"source": "loop"}, true},
		{"string mismatch", Metadata{"source": "input"}, false},
		{"int vs float", Metadata{"step": 1.0}, true},
		{"int vs int8", Metadata{"step": int8(1)}, true},
		{"json.Number", Metadata{"step": json.Number("1")}, true},
		{"type difference", Metadata{"step": "1"}, false},
		{"float", Metadata{"score": float32(0.5)}, true},
		{"several keys", Metadata{"source": "loop", "step": 1}, true},
		{"one of several mismatches", Metadata{"source": "loop", "step": 2}, false},
		{"nil matches missing", Metadata{"missing": nil}, true},
		{"nil matches nil", Metadata{"none": nil}, true},
		{"nil vs value", Metadata{"source": nil}, false},
		{"value vs missing", Metadata{"missing": 1}, false},
		{"value vs nil", Metadata{"none": 1}, false},
		{"nested deep equality", Metadata{"parents": map[string]any{"child": map[string]any{"x": []int{1, 2}}, "": "a"}}, true},
		{"nested order matters in arrays", Metadata{"parents": map[string]any{"child": map[string]any{"x": []any{2, 1}}, "": "a"}}, false},
		{"nested subset is not equal", Metadata{"parents": map[string]any{"": "a"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := md.Matches(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Matches(%v) = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
	if _, err := md.Matches(Metadata{"step": math.NaN()}); !errors.Is(err, ErrInvalidCheckpoint) {
		t.Errorf("NaN filter: err = %v, want ErrInvalidCheckpoint", err)
	}
	if _, err := (Metadata{"c": make(chan int)}).Matches(Metadata{"c": 1}); !errors.Is(err, ErrInvalidCheckpoint) {
		t.Errorf("unencodable metadata: err = %v, want ErrInvalidCheckpoint", err)
	}
	if ok, _ := (Metadata(nil)).Matches(Metadata{"a": nil}); !ok {
		t.Errorf("nil metadata does not match a nil filter value")
	}
}
