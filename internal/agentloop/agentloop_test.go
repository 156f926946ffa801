package agentloop

import (
	"context"
	"errors"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
)

// recorder is a checkpointer that records the loop's calls.
type recorder struct {
	gets, writes, puts int
	writesPerTask      map[string]int
	lastCfg            checkpoint.Config
	msgs               []int // the messages of each Put
	routes             []string
	err                error
}

func (r *recorder) GetTuple(_ context.Context, cfg checkpoint.Config) (*checkpoint.Tuple, error) {
	r.gets++
	if cfg.CheckpointID != "" {
		r.err = errors.New("GetTuple of an id")
	}
	return nil, checkpoint.ErrNotFound
}

func (r *recorder) PutWrites(_ context.Context, cfg checkpoint.Config, w []checkpoint.Write, taskID, _ string) error {
	r.writes++
	if r.writesPerTask == nil {
		r.writesPerTask = map[string]int{}
	}
	r.writesPerTask[taskID] += len(w)
	if cfg != r.lastCfg {
		r.err = errors.New("PutWrites against another checkpoint than the last Put's")
	}
	return nil
}

func (r *recorder) Put(_ context.Context, cfg checkpoint.Config, cp checkpoint.Checkpoint, _ checkpoint.Metadata, changed map[string]string) (checkpoint.Config, error) {
	r.puts++
	if cfg != r.lastCfg {
		r.err = errors.New("Put's parent is not the last Put's config")
	}
	if len(changed) != 2 || changed["messages"] != cp.ChannelVersions["messages"] {
		r.err = errors.New("changed versions are not the checkpoint's")
	}
	r.msgs = append(r.msgs, len(cp.ChannelValues["messages"].([]any)))
	r.routes = append(r.routes, cp.ChannelValues["route"].(string))
	r.lastCfg = cfg.WithID(cp.ID)
	return r.lastCfg, nil
}

func TestInvoke(t *testing.T) {
	r := &recorder{lastCfg: checkpoint.Config{ThreadID: "t1"}}
	n, err := Invoke(context.Background(), r, "t1", nil)
	if err != nil || n != StepsPerInvoke {
		t.Fatalf("Invoke = %d, %v", n, err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.gets != 1 || r.puts != StepsPerInvoke || r.writes != 2*(StepsPerInvoke-1) {
		t.Errorf("%d GetTuple, %d Put, %d PutWrites; want 1, %d, %d", r.gets, r.puts, r.writes, StepsPerInvoke, 2*(StepsPerInvoke-1))
	}
	for task, n := range r.writesPerTask {
		if n != 2 {
			t.Errorf("task %s wrote %d values, want 2", task, n)
		}
	}
	for i, m := range r.msgs {
		if m != i+2 { // the system message, then one per step
			t.Errorf("Put %d holds %d messages, want %d", i, m, i+2)
		}
	}
	if r.routes[0] == r.routes[1] {
		t.Error("the small channel did not change")
	}
}

func TestInvokeStopsWhenNextSaysSo(t *testing.T) {
	r := &recorder{lastCfg: checkpoint.Config{ThreadID: "t"}}
	left := 5
	n, err := Invoke(context.Background(), r, "t", func() bool { left--; return left >= 0 })
	if err != nil || n != 5 || r.puts != 5 {
		t.Fatalf("Invoke = %d, %v after %d Puts; want 5 steps", n, err, r.puts)
	}
}

func TestInvokeWithoutCheckpointer(t *testing.T) {
	n, err := Invoke(context.Background(), nil, "t", nil)
	if err != nil || n != StepsPerInvoke {
		t.Fatalf("Invoke = %d, %v", n, err)
	}
}

func TestInvokeError(t *testing.T) {
	boom := errors.New("boom")
	n, err := Invoke(context.Background(), failing{boom}, "t", nil)
	if !errors.Is(err, boom) || n != 0 {
		t.Fatalf("Invoke = %d, %v; want 0, boom", n, err)
	}
}

type failing struct{ err error }

func (f failing) GetTuple(context.Context, checkpoint.Config) (*checkpoint.Tuple, error) {
	return nil, checkpoint.ErrNotFound
}

func (f failing) PutWrites(context.Context, checkpoint.Config, []checkpoint.Write, string, string) error {
	return f.err
}

func (f failing) Put(context.Context, checkpoint.Config, checkpoint.Checkpoint, checkpoint.Metadata, map[string]string) (checkpoint.Config, error) {
	return checkpoint.Config{}, f.err
}
