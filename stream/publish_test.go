package stream_test

import (
	"context"
	"fmt"
	"github.com/graphstate/redcheck/internal/keys"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

type tier struct {
	name   string
	client func(t *testing.T) *redis.Client
}

var tiers = []tier{
	{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
	{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
}

// forTiers runs body on miniredis and on a real Redis (TestStreamsCluster
// runs the same bodies on a Redis Cluster).
func forTiers(t *testing.T, body func(t *testing.T, rdb redis.UniversalClient)) {
	for _, tr := range tiers {
		t.Run(tr.name, func(t *testing.T) { body(t, tr.client(t)) })
	}
}

func newSaver(t *testing.T, rdb redis.UniversalClient, opts redissaver.Options) *redissaver.Saver {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = redistest.Prefix(t)
	}
	opts.AcceptEviction = true
	s, err := redissaver.New(context.Background(), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// events reads every event of a thread's stream and of all feeds.
func events(t *testing.T, rdb redis.UniversalClient, s *redissaver.Saver, thread string) (own, feed []stream.Event) {
	t.Helper()
	ctx := context.Background()
	read := func(key string) []stream.Event {
		msgs, err := rdb.XRange(ctx, key, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []stream.Event
		for _, m := range msgs {
			ev, err := stream.DecodeEvent(m, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", key, m.ID, err)
			}
			// Each stream assigns its own entry ids, and the clock may tick
			// between the two XADDs of one script: compare the payloads.
			ev.ID, ev.Time = "", time.Time{}
			out = append(out, ev)
		}
		return out
	}
	own = read(keys.Of(s).Events(thread))
	for n := range keys.Of(s).Shards() {
		for _, ev := range read(keys.Of(s).Feed(n)) {
			if ev.ThreadID == thread {
				feed = append(feed, ev)
			}
		}
	}
	return own, feed
}

// TestEveryWriteAnnounced: each write that changes a thread appends exactly
// one event, to the thread's stream and to its shard's feed; writes that
// change nothing or fail append none.
func TestEveryWriteAnnounced(t *testing.T) { forTiers(t, everyWriteAnnounced) }

func everyWriteAnnounced(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Events: redissaver.Events{IncludeValues: true}})
	ctx := context.Background()
	th := "thread:1"
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts-1",
		ChannelValues:   map[string]any{"messages": []any{"hi"}, "cfg": 1},
		ChannelVersions: map[string]string{"messages": "2", "cfg": "1"}}
	parent := checkpoint.NewID()
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: "sub:1", CheckpointID: parent}, cp,
		checkpoint.Metadata{"step": 3, "source": "loop", "run_id": "run-1"}, map[string]string{"messages": "2", "cfg": "1"})
	if err != nil {
		t.Fatal(err)
	}
	writes := []checkpoint.Write{{Channel: "a", Value: 1}, {Channel: checkpoint.ErrorChannel, Value: "boom"}}
	if err := s.PutWrites(ctx, cfg, writes, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	// Repeated regular writes store nothing, so they announce nothing.
	if err := s.PutWrites(ctx, cfg, writes[:1], "task-1", ""); err != nil {
		t.Fatal(err)
	}
	// Failed writes announce nothing.
	if _, err := s.Put(ctx, checkpoint.Config{ThreadID: th}, checkpoint.Checkpoint{ID: "bad id"}, nil, nil); err == nil {
		t.Fatal("bad id accepted")
	}
	if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "x", Value: make(chan int)}}, "t", ""); err == nil {
		t.Fatal("a write the serializer refuses accepted")
	}
	if err := s.CopyThread(ctx, th, "copy"); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{th}, checkpoint.PruneKeepLatest); err != nil { // nothing to prune: no event
		t.Fatal(err)
	}
	if err := s.DeleteForRuns(ctx, []string{"run-1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, th); err != nil { // already empty: no event
		t.Fatal(err)
	}
	if err := s.DeleteThread(ctx, "copy"); err != nil { // copy lost run-1 too: no event
		t.Fatal(err)
	}

	own, feed := events(t, rdb, s, th)
	if fmt.Sprint(own) != fmt.Sprint(feed) {
		t.Errorf("stream and feed differ:\n%v\n%v", own, feed)
	}
	var types []stream.EventType
	for _, ev := range own {
		types = append(types, ev.Type)
	}
	if want := []stream.EventType{stream.TypeCheckpoint, stream.TypeWrites, stream.TypeRunsDeleted}; fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	c := own[0]
	if c.ThreadID != th || c.CheckpointNS != "sub:1" || c.CheckpointID != cp.ID || c.ParentID != parent || c.Step != 3 ||
		c.Source != "loop" || c.RunID != "run-1" || c.TS != "ts-1" || fmt.Sprint(c.Channels) != "[cfg messages]" {
		t.Errorf("checkpoint event %+v", c)
	}
	if v := fmt.Sprint(c.Values); v != "map[cfg:1 messages:[hi]]" {
		t.Errorf("checkpoint event values %s", v)
	}
	w := own[1]
	if w.TaskID != "task-1" || w.CheckpointID != cp.ID || fmt.Sprint(w.Channels) != "[a __error__]" || len(w.Writes) != 2 || w.Writes[1].Value != "boom" {
		t.Errorf("writes event %+v", w)
	}
	if r := own[2]; fmt.Sprint(r.RunIDs) != "[run-1]" || r.Count != 1 {
		t.Errorf("runs event %+v", r)
	}
	copied, _ := events(t, rdb, s, "copy")
	if len(copied) != 2 || copied[0].Type != stream.TypeThreadCopied || copied[0].SourceThreadID != th || copied[0].Count != 1 ||
		copied[1].Type != stream.TypeRunsDeleted {
		t.Errorf("copy events %+v", copied)
	}
}

func TestDeleteAndPruneAnnounced(t *testing.T) { forTiers(t, deleteAndPruneAnnounced) }

func deleteAndPruneAnnounced(t *testing.T, rdb redis.UniversalClient) {
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "p"}
	for range 3 {
		var err error
		if cfg, err = s.Put(ctx, cfg, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Prune(ctx, []string{"p"}, checkpoint.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"p"}, checkpoint.PruneDelete); err != nil {
		t.Fatal(err)
	}
	own, feed := events(t, rdb, s, "p")
	if len(own) != 5 || len(feed) != 5 {
		t.Fatalf("%d stream and %d feed events, want 5", len(own), len(feed))
	}
	if p := own[3]; p.Type != stream.TypePruned || p.Count != 2 || p.Strategy != "keep_latest" {
		t.Errorf("prune event %+v", p)
	}
	if d := own[4]; d.Type != stream.TypeThreadDeleted || d.Count != 1 {
		t.Errorf("delete event %+v", d)
	}
	if ttl := rdb.PTTL(ctx, keys.Of(s).Events("p")).Val(); ttl <= 0 {
		t.Errorf("a deleted thread's stream does not expire (TTL %v)", ttl)
	}
}

func TestPublishingOff(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true, Events: redissaver.Events{Disabled: true}})
	cfg, err := s.Put(context.Background(), checkpoint.Config{ThreadID: "quiet"}, checkpoint.Checkpoint{ID: "a"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(context.Background(), cfg, []checkpoint.Write{{Channel: "c", Value: 1}}, "t", ""); err != nil {
		t.Fatal(err)
	}
	for _, k := range mr.Keys() {
		if typ, _ := rdb.Type(context.Background(), k).Result(); typ == "stream" {
			t.Errorf("publishing off, yet stream %q exists", k)
		}
	}
}
