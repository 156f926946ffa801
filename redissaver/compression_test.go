package redissaver_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/graphstate/redcheck/internal/keys"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// With MsgpackSerializer a top-level []byte is stored as pack("bytes", b):
// 7 bytes more than b, which puts a stored value at an exact size.
func storedSize(n int) []byte { return bytes.Repeat([]byte("a"), n-len("5:bytes")) }

// noValue in a step's values bumps the channel's version without a value.
type noValue struct{}

func noise(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

// rawValues returns every stored value under prefix: blob hash values and
// the stored value inside each pending write (pack(channel, task path,
// value)), keyed by key and field.
func rawValues(t *testing.T, rdb redis.UniversalClient, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	ks, err := rdb.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		switch {
		case strings.HasSuffix(k, ":blobs"):
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				out[k+" "+f] = v
			}
		case strings.Contains(k, ":cp:"):
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				if strings.HasPrefix(f, "w:") {
					_, rest := lenPart(v)   // channel
					_, rest = lenPart(rest) // task path
					out[k+" "+f] = rest
				}
			}
		}
	}
	return out
}

// TestCompressionRoundTrips writes one thread with compression switched on
// and off between steps, values over, at and under the threshold and an
// incompressible one among them, and reads it back through every read path
// with savers of both settings.
func TestCompressionRoundTrips(t *testing.T) {
	for _, tr := range []struct {
		name   string
		client func(t *testing.T) *redis.Client
	}{
		{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
		{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
	} {
		t.Run(tr.name, func(t *testing.T) {
			rdb := tr.client(t)
			ctx := context.Background()
			prefix := redistest.Prefix(t)
			saver := func(c redissaver.Compression) *redissaver.Saver {
				s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, AcceptEviction: true, Compression: c,
					Events: redissaver.Events{IncludeValues: true, MaxValueBytes: 1 << 20, MaxEventBytes: 4 << 20}})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			on := saver(redissaver.Compression{Enabled: true, MinBytes: 1024, Level: 9})
			off := saver(redissaver.Compression{})
			fast := saver(redissaver.Compression{Enabled: true, MinBytes: 1024, Level: 1})
			text := strings.Repeat("the agent calls a tool and reads its result. ", 200)

			steps := []struct {
				name   string
				s      *redissaver.Saver
				values map[string]any // the channels this step changes
				writes []checkpoint.Write
				zipped []string // the channels and writes stored compressed
			}{
				{"on: over, at and under the threshold, incompressible", on, map[string]any{
					"text": text, "at": storedSize(1024), "under": storedSize(1023), "noise": noise(4096), "small": 7,
				}, []checkpoint.Write{{Channel: "text", Value: text}, {Channel: "small", Value: 1}, {Channel: "noise", Value: noise(2048)}},
					[]string{"text", "at", "w:text"}},
				{"off: plain beside compressed", off, map[string]any{"text": text + "!", "at": storedSize(2048)},
					[]checkpoint.Write{{Channel: "text", Value: text}}, nil},
				{"on again, fastest level", fast, map[string]any{"text": text + "?", "delta": checkpoint.DeltaSnapshot{Value: []any{text}}},
					[]checkpoint.Write{{Channel: "delta", Value: text}, {Channel: checkpoint.InterruptChannel, Value: text}},
					[]string{"text", "delta", "w:delta", "w:" + checkpoint.InterruptChannel}},
				{"off: delta writes after a compressed snapshot", off, map[string]any{"small": 8, "delta": noValue{}},
					[]checkpoint.Write{{Channel: "delta", Value: "d1"}}, nil},
				{"on: a compressed delta write", on, map[string]any{"small": 9, "delta": noValue{}},
					[]checkpoint.Write{{Channel: "delta", Value: text + "d2"}}, []string{"w:delta"}},
			}

			cfg := checkpoint.Config{ThreadID: "zip"}
			versions := map[string]string{}
			values := map[string]any{}
			var tuples []checkpoint.Tuple
			for i, st := range steps {
				before := rawValues(t, rdb, prefix)
				nv := map[string]string{}
				for ch, v := range st.values {
					versions[ch] = st.s.NextVersion(versions[ch])
					nv[ch] = versions[ch]
					values[ch] = v
					if v == (noValue{}) {
						delete(values, ch) // a version without a value, as a delta channel has
					}
				}
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
					ChannelValues: cloneMap(values), ChannelVersions: cloneMap(versions)}
				next, err := st.s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, nv)
				if err != nil {
					t.Fatalf("%s: Put: %v", st.name, err)
				}
				if err := st.s.PutWrites(ctx, next, st.writes, "task", "path"); err != nil {
					t.Fatalf("%s: PutWrites: %v", st.name, err)
				}
				// Which new values are stored compressed: those of zipped only.
				zipped := map[string]bool{}
				for k, v := range rawValues(t, rdb, prefix) {
					if _, old := before[k]; old {
						continue
					}
					_, name, _ := strings.Cut(k, " ")
					if strings.HasPrefix(name, "w:") {
						name = "w:" + writeChannel(t, rdb, k)
					} else {
						name, _ = lenPart(name)
					}
					zipped[name] = strings.HasPrefix(v, "z")
				}
				for name, z := range zipped {
					if want := contains(st.zipped, name); z != want {
						t.Errorf("%s: %s stored compressed = %v, want %v", st.name, name, z, want)
					}
				}
				tup, err := off.GetTuple(ctx, next)
				if err != nil {
					t.Fatalf("%s: GetTuple: %v", st.name, err)
				}
				tuples = append(tuples, *tup)
				cfg = next
			}

			// Every read path, with both settings, reads the same state.
			for _, rd := range []*redissaver.Saver{on, off} {
				for i, want := range tuples {
					got, err := rd.GetTuple(ctx, want.Config)
					if err != nil || !reflect.DeepEqual(got.Checkpoint.ChannelValues, want.Checkpoint.ChannelValues) ||
						!reflect.DeepEqual(got.PendingWrites, want.PendingWrites) {
						t.Fatalf("step %d: GetTuple differs (%v)", i, err)
					}
					if i == 0 && (!reflect.DeepEqual(got.Checkpoint.ChannelValues["noise"], noise(4096)) || got.Checkpoint.ChannelValues["text"] != text) {
						t.Fatalf("step 0 values changed")
					}
				}
				n := 0
				for tup, err := range rd.List(ctx, checkpoint.ListQuery{ThreadID: "zip"}) {
					if err != nil {
						t.Fatal(err)
					}
					want := tuples[len(tuples)-1-n]
					if !reflect.DeepEqual(tup.Checkpoint.ChannelValues, want.Checkpoint.ChannelValues) || !reflect.DeepEqual(tup.PendingWrites, want.PendingWrites) {
						t.Fatalf("List entry %d differs", n)
					}
					n++
				}
				h, err := rd.DeltaChannelHistory(ctx, cfg, []string{"delta"})
				if err != nil {
					t.Fatal(err)
				}
				d := h["delta"]
				// The seed is step 2's compressed snapshot, its compressed write
				// included; the target's own writes are not.
				if !d.HasSeed || !reflect.DeepEqual(d.Seed, checkpoint.DeltaSnapshot{Value: []any{text}}) || len(d.Writes) != 2 ||
					d.Writes[0].Value != text || d.Writes[1].Value != "d1" {
					t.Fatalf("DeltaChannelHistory = %+v", d)
				}
				if v, err := violations(ctx, rd, "zip"); err != nil || len(v) != 0 {
					t.Fatalf("Check: %v, %v", v, err)
				}
			}
			if err := on.CopyThread(ctx, "zip", "zip-copy"); err != nil {
				t.Fatal(err)
			}
			got, err := off.GetTuple(ctx, checkpoint.Config{ThreadID: "zip-copy"})
			if err != nil || !reflect.DeepEqual(got.Checkpoint.ChannelValues, tuples[len(tuples)-1].Checkpoint.ChannelValues) {
				t.Fatalf("the copy differs: %v", err)
			}

			// Events carry values as stored; package stream reads both forms.
			msgs, err := rdb.XRange(ctx, keys.Of(on).Events("zip"), "-", "+").Result()
			if err != nil {
				t.Fatal(err)
			}
			var sawZ bool
			for _, m := range msgs {
				for k, v := range m.Values {
					sawZ = sawZ || strings.HasPrefix(k, "v:") && strings.Contains(v.(string), ":z")
					sawZ = sawZ || strings.HasPrefix(k, "v:") && strings.HasPrefix(v.(string), "z")
				}
				ev, err := stream.DecodeEvent(m, nil)
				if err != nil {
					t.Fatalf("event %s: %v", m.ID, err)
				}
				if ev.Type == stream.TypeCheckpoint && ev.Step == 0 && ev.Values["text"] != text {
					t.Fatalf("event of step 0: text = %.20q", ev.Values["text"])
				}
				if ev.Type == stream.TypeWrites && len(ev.Writes) > 0 && ev.Writes[0].Channel == "text" && ev.Writes[0].Value != text {
					t.Fatalf("writes event: %.20q", ev.Writes[0].Value)
				}
			}
			if !sawZ {
				t.Fatal("no event carries a compressed value")
			}
		})
	}
}

func writeChannel(t *testing.T, rdb redis.UniversalClient, keyField string) string {
	t.Helper()
	k, f, _ := strings.Cut(keyField, " ")
	ch, _ := lenPart(rdb.HGet(context.Background(), k, f).Val())
	return ch
}

// lenPart cuts len ":" part off the front of s.
func lenPart(s string) (part, rest string) {
	head, rest, _ := strings.Cut(s, ":")
	n, _ := strconv.Atoi(head)
	return rest[:n], rest[n:]
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestCompressionCorruptValue: a compressed value that does not inflate is
// ErrCorrupt on every read, never a panic or a partial state.
func TestCompressionCorruptValue(t *testing.T) {
	_, rdb := redistest.Mini(t)
	ctx := context.Background()
	s := newSaver(t, rdb, redissaver.Options{Compression: redissaver.Compression{Enabled: true}})
	text := strings.Repeat("compress me ", 400)
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "bad"}, checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts",
		ChannelValues: map[string]any{"m": text}, ChannelVersions: map[string]string{"m": "1"}}, nil, map[string]string{"m": "1"})
	if err != nil {
		t.Fatal(err)
	}
	var key, field string
	for k, v := range rawValues(t, rdb, keys.Of(s).Prefix()) {
		if strings.HasPrefix(v, "z") {
			key, field, _ = strings.Cut(k, " ")
		}
	}
	if key == "" {
		t.Fatal("the value was not stored compressed")
	}
	good := rdb.HGet(ctx, key, field).Val()
	for _, bad := range []string{good[:len(good)-4], good + "x", "z4800:" + good[6:], "z999999999:abc", "z"} {
		rdb.HSet(ctx, key, field, bad)
		if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, redissaver.ErrCorrupt) || !errors.Is(err, checkpoint.ErrSerialization) {
			t.Errorf("%.12q…: GetTuple = %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestCompressionOptions(t *testing.T) {
	_, rdb := redistest.Mini(t)
	for _, c := range []redissaver.Compression{{Enabled: true, Level: 10}, {Enabled: true, Level: -1}, {Enabled: true, MinBytes: -1}, {Level: 12}} {
		if _, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: redistest.Prefix(t), AcceptEviction: true, Compression: c}); !errors.Is(err, redissaver.ErrInvalidOptions) {
			t.Errorf("%+v: New = %v, want ErrInvalidOptions", c, err)
		}
	}
}

// The whole kit with every value that gains from it compressed.
func TestConformanceCompression(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return newSaver(t, rdb, redissaver.Options{Compression: redissaver.Compression{Enabled: true, MinBytes: 1}})
	})
}
