package redissaver_test

import (
	"context"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
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
