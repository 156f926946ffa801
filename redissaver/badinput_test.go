package redissaver_test

import (
	"context"
	"errors"
	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/internal/keys"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

func TestNewValidatesOptions(t *testing.T) {
	_, rdb := redistest.Mini(t)
	if _, err := redissaver.New(context.Background(), nil, redissaver.Options{AcceptEviction: true}); err == nil {
		t.Error("nil client accepted")
	}
	for _, o := range []redissaver.Options{
		{Prefix: "a{b"}, {Prefix: "a b"}, {Shards: -1}, {Shards: 1 << 20}, {TTL: -time.Second},
		{TTL: time.Microsecond}, {RefreshOnRead: true}, {PageSize: -1}, {PageSize: 100000},
	} {
		if _, err := redissaver.New(context.Background(), rdb, o); !errors.Is(err, redissaver.ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
}

// countKeys counts the keys under the saver's prefix (a test may scan; the
// library never does), event streams aside: they are trimmed by length and
// outlive a deleted thread on purpose (see redissaver.Events).
func countKeys(t *testing.T, rdb redis.UniversalClient, prefix string) int {
	t.Helper()
	n, _ := footprint(t, rdb, prefix)
	return n
}

// TestHostileNames: each name either works in full isolation or is refused
// with ErrInvalidConfig; none reaches another thread's data.
func TestHostileNames(t *testing.T) {
	rdb := redistest.Real(t)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
	ctx := context.Background()
	names := []string{"*", "{x}", "a}b{c", "a:b|c", "\x00", "a", "a:", ":a", "%41", "A", " ", "日本語", "a\nb", "?[]\\", strings.Repeat("L", 4096)}
	for i, th := range names {
		for j, ns := range names[:6] {
			cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"who": th + "|" + ns}, ChannelVersions: map[string]string{"who": "1"}}
			cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns}, cp, checkpoint.Metadata{"i": i, "j": j}, map[string]string{"who": "1"})
			if err != nil {
				t.Fatalf("Put(%q, %q): %v", th, ns, err)
			}
			if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: th + "|" + ns}}, "t", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, th := range names {
		for _, ns := range names[:6] {
			tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns})
			if err != nil {
				t.Fatalf("GetTuple(%q, %q): %v", th, ns, err)
			}
			want := th + "|" + ns
			if tup.Checkpoint.ChannelValues["who"] != want || len(tup.PendingWrites) != 1 || tup.PendingWrites[0].Value != want {
				t.Errorf("thread %q ns %q reads %v / %v", th, ns, tup.Checkpoint.ChannelValues, tup.PendingWrites)
			}
		}
		n := 0
		for tup, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: th}) {
			if err != nil {
				t.Fatal(err)
			}
			if tup.Config.ThreadID != th {
				t.Errorf("List(%q) returned thread %q", th, tup.Config.ThreadID)
			}
			n++
		}
		if n != 6 {
			t.Errorf("List(%q): %d checkpoints, want 6", th, n)
		}
	}
	// Deleting each thread leaves the others whole, and finally nothing.
	for i, th := range names {
		if err := s.DeleteThread(ctx, th); err != nil {
			t.Fatal(err)
		}
		for _, other := range names[i+1:] {
			if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: other, CheckpointNS: "a"}); err != nil {
				t.Fatalf("deleting %q broke %q: %v", th, other, err)
			}
		}
	}
	if n := countKeys(t, rdb, keys.Of(s).Prefix()); n != 0 {
		t.Errorf("%d keys left after deleting every thread", n)
	}

	tooLong := strings.Repeat("x", 64<<10)
	for _, cfg := range []checkpoint.Config{{ThreadID: tooLong}, {ThreadID: "ok", CheckpointNS: tooLong}} {
		if _, err := s.Put(ctx, cfg, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil); !errors.Is(err, checkpoint.ErrInvalidConfig) {
			t.Errorf("Put with a 64 KiB name: %v, want ErrInvalidConfig", err)
		}
	}
	for _, id := range []string{"", "a b", "a:b", "{x}", "*", strings.Repeat("i", 200), "é"} {
		if _, err := s.Put(ctx, checkpoint.Config{ThreadID: "ok"}, checkpoint.Checkpoint{ID: id}, nil, nil); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
			t.Errorf("Put with id %q: %v, want ErrInvalidCheckpoint", id, err)
		}
		if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "ok", CheckpointID: id}); id != "" && !errors.Is(err, checkpoint.ErrNotFound) {
			t.Errorf("GetTuple with id %q: %v, want ErrNotFound", id, err)
		}
	}
	if n := countKeys(t, rdb, keys.Of(s).Prefix()); n != 0 {
		t.Errorf("refused input left %d keys", n)
	}
}

func TestBadValuesWriteNothing(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "t"}
	bad := []struct {
		name string
		cp   checkpoint.Checkpoint
		md   checkpoint.Metadata
		nv   map[string]string
	}{
		{"channel value", checkpoint.Checkpoint{ID: "a", ChannelValues: map[string]any{"c": make(chan int)}}, nil, map[string]string{"c": "1"}},
		{"metadata", checkpoint.Checkpoint{ID: "b"}, checkpoint.Metadata{"f": func() {}}, nil},
	}
	for _, b := range bad {
		if _, err := s.Put(ctx, cfg, b.cp, b.md, b.nv); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
			t.Errorf("%s: %v, want ErrInvalidCheckpoint", b.name, err)
		}
	}
	if ks := dataKeys(mr); len(ks) != 0 {
		t.Errorf("refused puts left keys %v", ks)
	}
	stored, err := s.Put(ctx, cfg, checkpoint.Checkpoint{ID: "c"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, stored, []checkpoint.Write{{Channel: "ok", Value: 1}, {Channel: "bad", Value: make(chan int)}}, "task", ""); !errors.Is(err, checkpoint.ErrInvalidCheckpoint) {
		t.Errorf("PutWrites of a channel value: %v", err)
	}
	tup, err := s.GetTuple(ctx, stored)
	if err != nil || len(tup.PendingWrites) != 0 {
		t.Errorf("a refused PutWrites stored %v (%v)", tup.PendingWrites, err)
	}
	if err := s.DeleteThread(ctx, ""); !errors.Is(err, checkpoint.ErrInvalidConfig) {
		t.Errorf("DeleteThread(\"\"): %v", err)
	}
}

func TestLargeValue(t *testing.T) {
	rdb := redistest.Real(t)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
	ctx := context.Background()
	big := []byte(strings.Repeat("0123456789abcdef", 1<<20)) // 16 MiB
	cp := checkpoint.Checkpoint{ID: checkpoint.NewID(), ChannelValues: map[string]any{"big": big}, ChannelVersions: map[string]string{"big": "1"}}
	cfg, err := s.Put(ctx, checkpoint.Config{ThreadID: "big"}, cp, nil, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	tup, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tup.Checkpoint.ChannelValues["big"].([]byte); len(got) != len(big) || string(got) != string(big) {
		t.Errorf("16 MiB value came back as %d bytes", len(got))
	}
}

func TestCancelledAndUnreachable(t *testing.T) {
	mr, rdb := redistest.Mini(t)
	s := newSaver(t, rdb, redissaver.Options{AcceptEviction: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := checkpoint.Config{ThreadID: "t"}
	if _, err := s.Put(ctx, cfg, checkpoint.Checkpoint{ID: "a"}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v", err)
	}
	if _, err := s.GetTuple(ctx, cfg); !errors.Is(err, context.Canceled) {
		t.Errorf("GetTuple with a cancelled context: %v", err)
	}
	if ks := dataKeys(mr); len(ks) != 0 {
		t.Errorf("a cancelled Put wrote keys %v", ks)
	}

	// New reads the server (meta key, eviction policy): an unreachable one
	// is an error there already. The operations on a server that goes away
	// are tested in resilience_test.go.
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	if _, err := redissaver.New(context.Background(), dead, redissaver.Options{AcceptEviction: true}); err == nil {
		t.Error("New on unreachable Redis: no error")
	}
}

// dataKeys lists the keys of a miniredis but what New writes: the prefixes'
// meta keys, and shard registries holding only their marker.
func dataKeys(mr *miniredis.Miniredis) []string {
	var out []string
	for _, k := range mr.Keys() {
		if strings.HasSuffix(k, ":meta") {
			continue
		}
		if strings.HasSuffix(k, "}:threads") {
			if m, err := mr.ZMembers(k); err == nil && len(m) == 1 && m[0] == "" {
				continue
			}
		}
		out = append(out, k)
	}
	return out
}
