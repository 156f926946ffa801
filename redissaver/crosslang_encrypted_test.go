package redissaver_test

// Cross-language tests of encryption at rest (docs/storage-format.md,
// "Encrypted values"), driven by js/test/crosslang-encrypted.test.ts, which
// sets REDCHECK_CROSSLANG (the exchange directory), REDCHECK_CROSSLANG_KEY
// (the hex of the 32-byte key both sides hold, key id "xl") and REDIS_URL;
// without them they skip.
//
//   - TestCrossLangEncryptedGoWrites: the Go saver writes a thread with
//     encryption (and compression) on, checks that every value it stored is
//     sealed and that a saver without the keyring refuses it, and dumps what
//     it reads back (go_encrypted.json) for the JS side to compare with.
//   - TestCrossLangEncryptedJSReads: the JS side wrote a thread encrypted and
//     dumped what it reads back (js_encrypted.json): GetTuple, List and
//     DeltaChannelHistory with the keyring must return it, and a saver
//     without the keyring must refuse it with checkpoint.ErrDecrypt; the
//     stream consumer with the keyring opens the values its events carry
//     (checkpoint events with "vv:", writes events) to the same values.

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
)

// crossKeyring returns the keyring both sides share, or skips the test.
func crossKeyring(t *testing.T) *checkpoint.Keyring {
	t.Helper()
	key, err := hex.DecodeString(os.Getenv("REDCHECK_CROSSLANG_KEY"))
	if err != nil || len(key) == 0 {
		t.Skip("REDCHECK_CROSSLANG_KEY is unset: run by js/test/crosslang-encrypted.test.ts")
	}
	ring, err := checkpoint.NewKeyring("xl", map[string][]byte{"xl": key})
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func TestCrossLangEncryptedGoWrites(t *testing.T) {
	dir := crossDir(t)
	ring := crossKeyring(t)
	ctx := context.Background()
	rdb := redistest.Real(t)
	doc := xDoc{Prefix: redistest.Prefix(t), Shards: 4}
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: doc.Prefix, Shards: doc.Shards, Encryption: ring,
		Compression: redissaver.Compression{Enabled: true, MinBytes: 256}})
	if err != nil {
		t.Fatal(err)
	}
	story := strings.Repeat("the agent calls a tool and reads its result. ", 40)
	values := []map[string]any{
		{"messages": checkpoint.DeltaSnapshot{Value: []any{"m0"}}, "count": int64(1), "name": "go", "blob": []byte{0, 1, 255},
			"nested": map[string]any{"a": []any{int64(1), "x", true}}, "story": story},
		{"count": int64(2)},
		{"count": int64(3), "name": "go again"},
	}
	const thread = "go-enc"
	var ids []string
	for _, ns := range []string{"", "sub:1"} {
		cfg := checkpoint.Config{ThreadID: thread, CheckpointNS: ns}
		prev := checkpoint.Empty()
		for step, upd := range values {
			cp, newVersions := checkpoint.Next(prev, upd, nil)
			md := checkpoint.Metadata{"source": "loop", "step": step, "parents": map[string]any{}, "writer": "go"}
			if cfg, err = s.Put(ctx, cfg, cp, md, newVersions); err != nil {
				t.Fatal(err)
			}
			if ns == "" {
				ids = append(ids, cp.ID)
			}
			writes := []checkpoint.Write{{Channel: "messages", Value: fmt.Sprintf("m%d", step+1)}, {Channel: "story", Value: fmt.Sprint(story, step)}}
			if err := s.PutWrites(ctx, cfg, writes, fmt.Sprintf("task-%d", step), "~__pregel_pull, agent"); err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: checkpoint.InterruptChannel, Value: map[string]any{"value": "ask"}}}, "task-b", ""); err != nil {
				t.Fatal(err)
			}
			prev = cp
		}
	}
	sealed := 0
	for k, v := range rawValues(t, rdb, doc.Prefix) {
		if v == "" {
			continue // the values hash's marker
		}
		if v[0] != 'e' {
			t.Errorf("%s: stored in the clear", k)
		}
		sealed++
	}
	if sealed < 20 {
		t.Fatalf("%d values sealed", sealed)
	}
	plain, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: doc.Prefix, Shards: doc.Shards})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.GetTuple(ctx, checkpoint.Config{ThreadID: thread}); !errors.Is(err, checkpoint.ErrDecrypt) {
		t.Fatalf("GetTuple without the keyring: %v, want ErrDecrypt", err)
	}
	for _, ns := range []string{"", "sub:1"} {
		for tp, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: thread, CheckpointNS: &ns}) {
			if err != nil {
				t.Fatal(err)
			}
			doc.Tuples = append(doc.Tuples, dumpTuple(t, tp))
		}
	}
	appendDeltas(t, &doc, s, thread, ids[len(ids)-1])
	writeXDoc(t, dir, "go_encrypted.json", doc)
}

func TestCrossLangEncryptedJSReads(t *testing.T) {
	ring := crossKeyring(t)
	doc := readXDoc(t, crossDir(t), "js_encrypted.json")
	if len(doc.Tuples) == 0 || len(doc.Deltas) == 0 {
		t.Fatalf("js_encrypted.json holds %d tuples and %d histories", len(doc.Tuples), len(doc.Deltas))
	}
	ctx := context.Background()
	rdb := redistest.Real(t)
	s, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: doc.Prefix, Shards: doc.Shards, Encryption: ring})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: doc.Prefix, Shards: doc.Shards})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range doc.Tuples {
		cfg := checkpoint.Config{ThreadID: want.Thread, CheckpointNS: want.NS, CheckpointID: want.ID}
		tp, err := s.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatalf("GetTuple %s/%q/%s: %v", want.Thread, want.NS, want.ID, err)
		}
		got := dumpTuple(t, tp)
		sortWrites(got.PendingWrites)
		sortWrites(want.PendingWrites)
		if g, w := canon(t, got), canon(t, want); g != w {
			t.Errorf("GetTuple %s/%q/%s:\n got %s\nwant %s", want.Thread, want.NS, want.ID, g, w)
		}
		if _, err := plain.GetTuple(ctx, cfg); !errors.Is(err, checkpoint.ErrDecrypt) {
			t.Errorf("GetTuple %s/%q/%s without the keyring: %v, want ErrDecrypt", want.Thread, want.NS, want.ID, err)
		}
	}
	for _, want := range doc.Lists {
		var ids []string
		for tp, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: want.Thread, CheckpointNS: want.NS}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tp.Checkpoint.ID)
		}
		if !slices.Equal(ids, want.IDs) {
			t.Errorf("List %s %v: %v, want %v", want.Thread, want.NS, ids, want.IDs)
		}
	}
	for _, want := range doc.Deltas {
		cfg := checkpoint.Config{ThreadID: want.Thread, CheckpointNS: want.NS, CheckpointID: want.ID}
		hist, err := s.DeltaChannelHistory(ctx, cfg, []string{want.Channel})
		if err != nil {
			t.Fatal(err)
		}
		h := hist[want.Channel]
		got := xDelta{Thread: want.Thread, NS: want.NS, ID: want.ID, Channel: want.Channel, HasSeed: h.HasSeed, Writes: typedWrites(t, h.Writes)}
		if h.HasSeed {
			v := typed(t, h.Seed)
			got.Seed = &v
		}
		if g, w := canon(t, got), canon(t, want); g != w {
			t.Errorf("DeltaChannelHistory %s %s:\n got %s\nwant %s", want.ID, want.Channel, g, w)
		}
		if _, err := plain.DeltaChannelHistory(ctx, cfg, []string{want.Channel}); !errors.Is(err, checkpoint.ErrDecrypt) {
			t.Errorf("DeltaChannelHistory %s %s without the keyring: %v, want ErrDecrypt", want.ID, want.Channel, err)
		}
	}

	// The events the JS side wrote with includeValues: the consumer opens their values with the keyring.
	byID := map[string]xTuple{}
	for _, tp := range doc.Tuples {
		byID[tp.NS+"/"+tp.ID] = tp
	}
	sub, err := stream.New(rdb, stream.Options{Prefix: doc.Prefix, Shards: doc.Shards, Encryption: ring})
	if err != nil {
		t.Fatal(err)
	}
	values, writes := 0, 0
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for ev, err := range sub.Subscribe(sctx, stream.Query{From: stream.FromBeginning}) {
		if err != nil {
			if sctx.Err() != nil {
				break
			}
			t.Fatalf("Subscribe: %v", err)
		}
		tp, ok := byID[ev.CheckpointNS+"/"+ev.CheckpointID]
		if !ok {
			continue
		}
		for ch, v := range ev.Values {
			if g, w := canon(t, typed(t, v)), canon(t, tp.ChannelValues[ch]); g != w {
				t.Errorf("event of %s/%q/%s: value of %q:\n got %s\nwant %s", ev.ThreadID, ev.CheckpointNS, ev.CheckpointID, ch, g, w)
			}
			values++
		}
		for _, w := range ev.Writes {
			found := false
			for _, pw := range tp.PendingWrites {
				found = found || pw.Task == w.TaskID && pw.Channel == w.Channel && canon(t, pw.Value) == canon(t, typed(t, w.Value))
			}
			if !found {
				t.Errorf("event of %s/%q/%s: write %s/%s is no pending write of the checkpoint", ev.ThreadID, ev.CheckpointNS, ev.CheckpointID, w.TaskID, w.Channel)
			}
			writes++
		}
	}
	if values < len(doc.Tuples) || writes < len(doc.Tuples) {
		t.Errorf("events carried %d values and %d writes for %d checkpoints", values, writes, len(doc.Tuples))
	}
}
