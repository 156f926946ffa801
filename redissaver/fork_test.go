package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
	"github.com/graphstate/redcheck/internal/keys"
	mb "github.com/graphstate/redcheck/internal/member"
	"github.com/graphstate/redcheck/redissaver"
)

// TestForkReadsCopiedValues: LangGraph's fork (update_state with as_node
// "__copy__") puts a copy of a checkpoint X beside it: the same channel
// versions, X's parent as its parent, and no new versions. The versions X
// wrote itself are then named by the copy and not by its parent; the copy
// reads their values back, as memsaver's does.
func TestForkReadsCopiedValues(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			for name, s := range map[string]checkpoint.Saver{
				"redissaver": newSaver(t, b.client(t), redissaver.Options{}),
				"nohints":    newSaver(t, b.client(t), redissaver.Options{ReadHints: -1}),
				"memsaver":   memsaver.New(memsaver.Options{}),
			} {
				base := checkpoint.Config{ThreadID: "fork"}
				p := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "a1", "b": "b1"},
					ChannelVersions: map[string]string{"a": "1", "b": "1"}}
				pc, err := s.Put(ctx, base, p, nil, p.ChannelVersions)
				if err != nil {
					t.Fatal(err)
				}
				x := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "a2", "b": "b1"},
					ChannelVersions: map[string]string{"a": "2", "b": "1"}}
				xc, err := s.Put(ctx, pc, x, nil, map[string]string{"a": "2"})
				if err != nil {
					t.Fatal(err)
				}
				saved, err := s.GetTuple(ctx, xc)
				if err != nil {
					t.Fatal(err)
				}
				fork := saved.Checkpoint
				fork.ID = checkpoint.NewID()
				fc, err := s.Put(ctx, *saved.ParentConfig, fork, checkpoint.Metadata{"source": "fork"}, map[string]string{})
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.GetTuple(ctx, fc)
				if err != nil {
					t.Fatal(err)
				}
				if v := got.Checkpoint.ChannelValues; v["a"] != "a2" || v["b"] != "b1" {
					t.Errorf("%s: the fork reads %v, want a2 and b1", name, v)
				}
			}
		})
	}
}

// TestForkAliasWithoutItsValue: the alias under a staged value's plain field
// whose value is gone. With no reclaim of values running, the value was lost:
// the fork's Put is ErrDataLoss and writes nothing. While a reclaim runs (its
// keep set exists), the reclaim took it, no checkpoint pointing to it: the
// fork reads the channel back absent, as a version never stored.
func TestForkAliasWithoutItsValue(t *testing.T) {
	for _, b := range backends {
		for _, reclaiming := range []bool{false, true} {
			t.Run(fmt.Sprint(b.name, "/reclaiming=", reclaiming), func(t *testing.T) {
				ctx := context.Background()
				rdb := b.client(t)
				s := newSaver(t, rdb, redissaver.Options{})
				p := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "a1"},
					ChannelVersions: map[string]string{"a": "1"}}
				pc, err := s.Put(ctx, checkpoint.Config{ThreadID: "fork"}, p, nil, p.ChannelVersions)
				must(t, err)
				x := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"a": "a2"},
					ChannelVersions: map[string]string{"a": "2"}}
				_, err = s.Put(ctx, pc, x, nil, x.ChannelVersions)
				must(t, err)
				l := keys.Of(s)
				blobs := l.Blobs("fork", rdb.HGet(ctx, l.Head("fork"), keys.HeadGeneration).Val(), "")
				if alias := rdb.HGet(ctx, blobs, mb.Blob("a", "2")).Val(); !mb.IsAlias(alias) {
					t.Fatalf("plain field of a staged value holds %q, want an alias", alias)
				}
				must(t, rdb.HDel(ctx, blobs, storedBlobField(t, rdb, blobs, "a", "2")).Err())
				if reclaiming {
					must(t, rdb.SAdd(ctx, strings.TrimSuffix(blobs, ":blobs")+":keep", "").Err())
				}
				fork := x
				fork.ID = checkpoint.NewID()
				fc, err := s.Put(ctx, pc, fork, nil, map[string]string{})
				if !reclaiming {
					if !errors.Is(err, checkpoint.ErrDataLoss) {
						t.Fatalf("fork Put: %v, want ErrDataLoss", err)
					}
					if !strings.Contains(err.Error(), "its alias is there") {
						t.Errorf("fork Put: %v, want the lost staged value named", err)
					}
					if _, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "fork", CheckpointID: fork.ID}); !errors.Is(err, checkpoint.ErrNotFound) {
						t.Errorf("the refused fork: %v, want ErrNotFound", err)
					}
					return
				}
				must(t, err)
				got, err := s.GetTuple(ctx, fc)
				must(t, err)
				if _, ok := got.Checkpoint.ChannelValues["a"]; ok || got.Checkpoint.ChannelVersions["a"] != "2" {
					t.Errorf("the fork reads %v %v, want a absent at version 2", got.Checkpoint.ChannelValues, got.Checkpoint.ChannelVersions)
				}
				if v := rdb.HGet(ctx, blobs, mb.Blob("a", "2")).Val(); v != "" {
					t.Errorf("plain field holds %q after the fork, want the empty marker", v)
				}
			})
		}
	}
}
