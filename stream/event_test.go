package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

func TestDecodeEvent(t *testing.T) {
	typ, data, _ := checkpoint.MsgpackSerializer{}.DumpsTyped([]any{"hi"})
	ok := redis.XMessage{ID: "1700000000123-4", Values: map[string]any{
		"t": "checkpoint", "th": "t%3A1", "ns": "child%3A1", "id": "ID2", "p": "ID1", "step": "3",
		"src": "loop", "run": "r1", "ts": "2026", "ch": codec.JoinNames([]string{"messages", "a:b"}),
		"v:messages": codec.Pack(typ, string(data)), "v:a:b": "",
	}}
	ev, err := stream.DecodeEvent(ok, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != stream.TypeCheckpoint || ev.ThreadID != "t:1" || ev.CheckpointNS != "child:1" || ev.CheckpointID != "ID2" ||
		ev.ParentID != "ID1" || !ev.HasStep || ev.Step != 3 || ev.Source != "loop" || ev.RunID != "r1" || ev.TS != "2026" ||
		len(ev.Channels) != 2 || ev.Channels[1] != "a:b" || ev.Time.UnixMilli() != 1700000000123 {
		t.Errorf("decoded %+v", ev)
	}
	if v, _ := ev.Values["messages"].([]any); len(v) != 1 || v[0] != "hi" {
		t.Errorf("values %v", ev.Values)
	}
	if _, ok := ev.Values["a:b"]; ok {
		t.Error("the empty marker decoded as a value")
	}

	w := redis.XMessage{ID: "1-0", Values: map[string]any{"t": "writes", "th": "t", "ns": "", "id": "c", "task": "k",
		"ch": codec.JoinNames([]string{"x", "y"}), "v:1": codec.Pack("y", "", typ, string(data)), "v:0": codec.Pack("x", "", "null", "")}}
	ev, err = stream.DecodeEvent(w, nil)
	if err != nil || len(ev.Writes) != 2 || ev.Writes[0].Channel != "x" || ev.Writes[1].Channel != "y" || ev.Writes[0].Value != nil {
		t.Errorf("writes event: %+v, %v", ev, err)
	}

	// Compressed values (docs/storage-format.md, "Stored values") read as plain ones.
	long := strings.Repeat("compressed ", 200)
	typ2, data2, _ := checkpoint.MsgpackSerializer{}.DumpsTyped(long)
	zipped := codec.Compress(codec.Pack(typ2, string(data2)), 6, 1)
	z := redis.XMessage{ID: "1-0", Values: map[string]any{"t": "checkpoint", "th": "t", "v:m": zipped}}
	zw := redis.XMessage{ID: "1-0", Values: map[string]any{"t": "writes", "th": "t", "v:0": codec.Pack("m", "path", zipped)}}
	if ev, err := stream.DecodeEvent(z, nil); !codec.IsCompressed(zipped) || err != nil || ev.Values["m"] != long {
		t.Errorf("compressed value: %v", err)
	}
	if ev, err := stream.DecodeEvent(zw, nil); err != nil || len(ev.Writes) != 1 || ev.Writes[0].Channel != "m" || ev.Writes[0].Value != long {
		t.Errorf("compressed write: %v", err)
	}

	for name, vals := range map[string]map[string]any{
		"bad compressed value": {"t": "checkpoint", "th": "t", "v:x": zipped[:len(zipped)-2]},
		"bad compressed write": {"t": "writes", "th": "t", "v:0": codec.Pack("m", "", zipped+"x")},
		"no type":              {"th": "t"},
		"unknown type":         {"t": "nope", "th": "t"},
		"no thread":            {"t": "checkpoint"},
		"bad thread":           {"t": "checkpoint", "th": "a:b"},
		"bad namespace":        {"t": "checkpoint", "th": "t", "ns": "%zz"},
		"bad step":             {"t": "checkpoint", "th": "t", "step": "x"},
		"bad count":            {"t": "pruned", "th": "t", "n": "1.5"},
		"bad channels":         {"t": "checkpoint", "th": "t", "ch": "9:a"},
		"bad value":            {"t": "checkpoint", "th": "t", "v:x": "junk"},
		"bad write":            {"t": "writes", "th": "t", "v:z": codec.Pack("x", "", "null", "")},
		"bad bytes":            {"t": "checkpoint", "th": "t", "v:x": codec.Pack("msgpack", "\xc1")},
	} {
		if _, err := stream.DecodeEvent(redis.XMessage{ID: "1-0", Values: vals}, nil); !errors.Is(err, stream.ErrMalformedEvent) {
			t.Errorf("%s: %v, want ErrMalformedEvent", name, err)
		}
	}
	if _, err := stream.DecodeEvent(redis.XMessage{ID: "x", Values: ok.Values}, nil); !errors.Is(err, stream.ErrMalformedEvent) {
		t.Errorf("bad id: %v", err)
	}
}

// FuzzDecodeEvent: no entry makes the decoder panic; every error wraps
// ErrMalformedEvent.
func FuzzDecodeEvent(f *testing.F) {
	f.Add("1-0", "checkpoint", "t", "", "3", codec.JoinNames([]string{"a"}), "v:a", codec.Pack("msgpack", "\x01"))
	f.Add("5-5", "writes", "t%3A", "n", "", "", "v:0", codec.Pack("c", "", "json", "1"))
	f.Fuzz(func(t *testing.T, id, typ, th, ns, step, ch, vk, vv string) {
		_, err := stream.DecodeEvent(redis.XMessage{ID: id, Values: map[string]any{
			"t": typ, "th": th, "ns": ns, "step": step, "ch": ch, vk: vv,
		}}, nil)
		if err != nil && !errors.Is(err, stream.ErrMalformedEvent) {
			t.Fatalf("error %v does not wrap ErrMalformedEvent", err)
		}
	})
}

// TestValueRefs: a checkpoint event whose value the saver published by
// reference ("vref:<channel>" = the channel's version) decodes into
// ValueRefs and its JSON value_refs, and the version reads the value back
// with GetTuple. The entry is written with XADD, as the saver's script
// writes it.
func TestValueRefs(t *testing.T) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) {
			rdb := tr.client(t)
			s := newSaver(t, rdb, redissaver.Options{Shards: 1})
			sub := newSubscriber(t, rdb, s)
			ctx := context.Background()
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"messages": []any{"big"}},
				ChannelVersions: map[string]string{"messages": s.NextVersion("")}}
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "ref"}, cp, nil, cp.ChannelVersions)
			if err != nil {
				t.Fatal(err)
			}
			version := cp.ChannelVersions["messages"]
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: keys.Of(s).Events("ref"), Values: []any{
				"t", "checkpoint", "th", "ref", "ns", "", "id", cp.ID, "ch", codec.JoinNames([]string{"messages"}),
				"vref:messages", version,
			}}).Err(); err != nil {
				t.Fatal(err)
			}
			var ev stream.Event
			for e, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "ref", From: stream.FromBeginning}) {
				if err != nil {
					t.Fatal(err)
				}
				if e.ValueRefs != nil {
					ev = e
					break
				}
			}
			if fmt.Sprint(ev.ValueRefs) != fmt.Sprint(map[string]string{"messages": version}) || ev.Values != nil {
				t.Fatalf("ValueRefs %v, Values %v", ev.ValueRefs, ev.Values)
			}
			data, _ := json.Marshal(ev.JSON(nil))
			if want := `"value_refs":{"messages":"` + version + `"}`; !strings.Contains(string(data), want) {
				t.Errorf("JSON %s lacks %s", data, want)
			}
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: ev.ThreadID, CheckpointNS: ev.CheckpointNS, CheckpointID: ev.CheckpointID})
			if err != nil || tup.Config != cfg || tup.Checkpoint.ChannelVersions["messages"] != ev.ValueRefs["messages"] ||
				fmt.Sprint(tup.Checkpoint.ChannelValues["messages"]) != "[big]" {
				t.Errorf("GetTuple by the reference: %+v, %v", tup, err)
			}
		})
	}
	for name, vals := range map[string]map[string]any{
		"empty version": {"t": "checkpoint", "th": "t", "vref:x": ""},
		"no channel":    {"t": "checkpoint", "th": "t", "vref:": "1"},
	} {
		if _, err := stream.DecodeEvent(redis.XMessage{ID: "1-0", Values: vals}, nil); !errors.Is(err, stream.ErrMalformedEvent) {
			t.Errorf("%s: %v, want ErrMalformedEvent", name, err)
		}
	}
}
