package redissaver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// TestDeltaHistoryMatchesMemsaver writes one random chain of 600
// checkpoints to the saver and to memsaver (the reference) and compares
// DeltaChannelHistory for random targets and sets of channels. The chain
// mixes what delta_history.lua tells apart: channels whose names have
// lengths of one and two digits and are prefixes of one another ("l",
// "lo", "log", "logx"), unrequested and never-written channels, versions
// with and without a value (a value ends a channel's walk, "" does not),
// versions kept over several checkpoints, several writes of several tasks
// per checkpoint, and walks longer than one script call's 1,000 ancestors
// (asking for a channel never written walks to the root: 1,199 ancestors).
func TestDeltaHistoryMatchesMemsaver(t *testing.T) {
	for _, backend := range []struct {
		name string
		open func(t *testing.T) redis.UniversalClient
	}{
		{"miniredis", func(t *testing.T) redis.UniversalClient { _, rdb := redistest.Mini(t); return rdb }},
		{"redis", func(t *testing.T) redis.UniversalClient { return redistest.Real(t) }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := backend.open(t)
			s := newSaver(t, rdb, redissaver.Options{})
			ref := memsaver.New(memsaver.Options{})
			rnd := rand.New(rand.NewPCG(7, 11))
			channels := []string{"l", "lo", "log", "logx", "messages", "a_channel_named_at_length_31___"}
			tasks := []string{"t", "task-agent", "a-task-id-of-more-than-ten-bytes"}
			type state struct {
				version int
				value   any // nil: the version has no value
			}
			st := map[string]*state{}
			cfg, rcfg := checkpoint.Config{ThreadID: "diff"}, checkpoint.Config{ThreadID: "diff"}
			var heads []checkpoint.Config
			for step := range 1200 {
				values, versions, changed := map[string]any{}, map[string]string{}, map[string]string{}
				for _, ch := range channels {
					// "messages" gets a new version almost every step, the others now and then.
					p := 0.2
					if ch == "messages" {
						p = 0.9
					}
					if rnd.Float64() < p {
						c := st[ch]
						if c == nil {
							c = &state{}
							st[ch] = c
						}
						c.version++
						c.value = nil
						if rnd.IntN(40) == 0 {
							c.value = checkpoint.DeltaSnapshot{Value: fmt.Sprint(ch, "@", step)}
						} else if rnd.IntN(200) == 0 {
							c.value = fmt.Sprint("plain ", ch, "@", step)
						}
						changed[ch] = fmt.Sprint(c.version)
					}
					if c := st[ch]; c != nil {
						versions[ch] = fmt.Sprint(c.version)
						if c.value != nil {
							values[ch] = c.value
						}
					}
				}
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: values, ChannelVersions: versions}
				md := checkpoint.Metadata{"step": step}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, md, changed); err != nil {
					t.Fatal(err)
				}
				if rcfg, err = ref.Put(ctx, rcfg, cp, md, changed); err != nil {
					t.Fatal(err)
				}
				for _, task := range tasks {
					var ws []checkpoint.Write
					for range rnd.IntN(3) {
						ch := channels[rnd.IntN(len(channels))]
						ws = append(ws, checkpoint.Write{Channel: ch, Value: fmt.Sprint(task, " to ", ch, "@", step)})
					}
					if len(ws) == 0 {
						continue
					}
					if err := s.PutWrites(ctx, cfg, ws, task, ""); err != nil {
						t.Fatal(err)
					}
					if err := ref.PutWrites(ctx, rcfg, ws, task, ""); err != nil {
						t.Fatal(err)
					}
				}
				heads = append(heads, cfg)
			}
			ctr := redistest.CountRoundTrips(rdb)
			asks := [][]string{
				{"never", "log"}, {"messages"}, {"log"}, {"l", "lo", "log", "logx"}, channels, {"log", "log", "lo"},
			}
			for i := range 40 {
				head := heads[len(heads)-1-rnd.IntN(len(heads))]
				if i == 0 {
					head = heads[len(heads)-1]
				}
				ask := asks[i%len(asks)]
				ctr.Reset()
				got, err := s.DeltaChannelHistory(ctx, head, ask)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 && ctr.Load() < 2 {
					t.Errorf("a walk to the root took %d script call, want more than one", ctr.Load())
				}
				want, err := ref.DeltaChannelHistory(ctx, head, ask)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					for _, ch := range ask {
						if !reflect.DeepEqual(got[ch], want[ch]) {
							t.Errorf("history of %q at %s:\n got %+v\nwant %+v", ch, head.CheckpointID, got[ch], want[ch])
						}
					}
				}
			}
		})
	}
}
