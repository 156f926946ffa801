package redissaver

import (
	"context"
	"errors"
	"github.com/graphstate/redcheck/internal/codec"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

func TestWriteField(t *testing.T) {
	for _, tc := range []struct {
		task string
		idx  int
	}{{"task", 0}, {"t:1:2", -3}, {"", 7}, {"12:x", 10}} {
		task, idx, ok := codec.ParseWriteField(codec.WriteField(tc.task, tc.idx))
		if !ok || task != tc.task || idx != tc.idx {
			t.Errorf("codec.ParseWriteField(codec.WriteField(%q, %d)) = %q, %d, %v", tc.task, tc.idx, task, idx, ok)
		}
	}
}

func fuzzSaver(t testing.TB) *Saver {
	o, layout, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return &Saver{opts: o, layout: layout, ser: o.Serializer}
}

// FuzzDecodeStored feeds arbitrary stored bytes to the decoders of
// checkpoint hashes, values and writes: they must return a value or an
// error, never panic.
func FuzzDecodeStored(f *testing.F) {
	s := fuzzSaver(f)
	good, _ := s.encodeValue(ctxBG, valuePlace{}, map[string]any{"a": []any{1, "x"}})
	f.Add("v", "4", "c:messages", "1", good, "w:4:task:0", pack("ch", "", "msgpack", "\x01"))
	f.Add("s", "{}", "m:step", "1", "", "w:x", "junk")
	f.Add("u", "[\"a\"]", "m:k", "{", "7:msgpack", "w:1:t:-1", pack("ch", "", "null", ""))
	f.Fuzz(func(t *testing.T, f1, v1, f2, v2, blob, wf, wv string) {
		flat := []any{f1, v1, f2, v2, wf, wv}
		tup, err := s.decodeTuple(ctxBG, "th", "ns", "id", flat, []any{blob, blob}, []any{wf, wv})
		if err == nil && tup == nil {
			t.Fatal("nil tuple without an error")
		}
		if err != nil && !errors.Is(err, checkpoint.ErrSerialization) {
			t.Fatalf("error %v does not wrap ErrSerialization", err)
		}
		_, _ = s.decodeValue(ctxBG, valuePlace{}, blob)
		_, _ = s.decodeWrite(ctxBG, "th", "ns", "id", wf, wv)
		_, _ = s.decodeHistory(ctxBG, "th", "ns", false, blob, true, [][]any{{int64(1), wf, wv}})
		// Counts that the list does not hold (a malformed reply) are errors too.
		_, _ = s.decodeHistory(ctxBG, "th", "ns", false, blob, true, [][]any{{int64(len(v1)) - 1, wf, wv, f1}, {wf}})
	})
}

// TestDecodeHistoryMalformed: a list of writes that is not counts followed
// by that many field/value pairs of strings is ErrCorrupt, never a panic or
// a shorter history.
func TestDecodeHistoryMalformed(t *testing.T) {
	s := fuzzSaver(t)
	f, v := codec.WriteField("task", 0), pack("ch", "", "msgpack", "\xa1x")
	if h, err := s.decodeHistory(ctxBG, "th", "ns", false, nil, false, [][]any{{int64(1), f, v}, {int64(2), f, v, codec.WriteField("task", 1), v}}); err != nil || len(h.Writes) != 3 {
		t.Fatalf("well-formed lists: %v, %d writes", err, len(h.Writes))
	}
	for name, segs := range map[string][][]any{
		"count 0":             {{int64(0)}},
		"negative count":      {{int64(-1), f, v}},
		"count past the end":  {{int64(2), f, v}},
		"count not a number":  {{"1", f, v}},
		"no count":            {{f, v}},
		"odd pairs":           {{int64(1), f}},
		"field not a string":  {{int64(1), int64(3), v}},
		"value not a string":  {{int64(1), f, nil}},
		"trailing entry":      {{int64(1), f, v, f}},
		"bad list after good": {{int64(1), f, v}, {int64(1), f}},
	} {
		if _, err := s.decodeHistory(ctxBG, "th", "ns", false, nil, false, segs); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// ctxBG is the context of the tests of the codec's unexported functions.
var ctxBG = context.Background()
