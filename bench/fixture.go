package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// fixture is the T threads × S steps of the agent workload that the read
// passes read: each step a Put and the 2 tasks' PutWrites, as an agent
// does.
type fixture struct {
	saver   *redissaver.Saver
	cold    *redissaver.Saver // a second saver on the same prefix
	threads []string
	ids     [][]string // per thread, oldest first
}

// memoryResult is Redis's memory per checkpoint of the fixture.
type memoryResult struct {
	Checkpoints     int     `json:"checkpoints"`
	UsedBefore      int64   `json:"used_memory_before"`
	UsedAfter       int64   `json:"used_memory_after"`
	PerCheckpoint   float64 `json:"used_memory_per_checkpoint"`
	DatasetPerCkpt  float64 `json:"used_memory_dataset_per_checkpoint"`
	ChangedBytes    float64 `json:"changed_value_bytes_per_step"`
	WriteBytes      float64 `json:"pending_write_bytes_per_step"`
	StateBytesAtS50 int     `json:"state_bytes_at_step_50"`
	Method          string  `json:"method"`
}

// buildFixture writes the fixture on a fresh prefix through a client of its
// own, and measures Redis's used_memory before and after (after closing
// that client, so that its connections' buffers are not counted); then
// writes it again on another prefix with compression on, to measure that
// too.
func (h *harness) buildFixture(ctx context.Context) error {
	f := &fixture{threads: make([]string, h.cfg.threads)}
	for t := range f.threads {
		f.threads[t] = "agent-" + strconv.Itoa(t)
	}
	var err error
	if h.memory, f.ids, err = h.writeFixture(ctx, "fixture", f.threads, redissaver.Options{}); err != nil {
		return err
	}
	on := redissaver.Options{Compression: redissaver.Compression{Enabled: true}}
	if h.memoryOn, _, err = h.writeFixture(ctx, "fixture-z", f.threads, on); err != nil {
		return err
	}
	h.memoryOn.Method += fmt.Sprintf("; compression on (threshold %d B, DEFLATE level %d)", redissaver.DefaultCompressionMinBytes, redissaver.DefaultCompressionLevel)
	// The read passes use the measured client.
	f.saver, err = h.newSaver(ctx, h.client, "fixture", redissaver.Options{})
	if err != nil {
		return err
	}
	if f.cold, err = h.newSaver(ctx, h.client, "fixture", redissaver.Options{}); err != nil {
		return err
	}
	h.fixture = f
	return nil
}

// writeFixture writes the fixture's threads on the prefix of name with
// opts and returns Redis's memory per checkpoint and the checkpoint IDs.
func (h *harness) writeFixture(ctx context.Context, name string, threads []string, opts redissaver.Options) (memoryResult, [][]string, error) {
	cfg := h.cfg
	client := newClient(h.opt, 16, &meter{})
	defer func() { _ = client.Close() }()
	s, err := h.newSaver(ctx, client, name, opts)
	if err != nil {
		return memoryResult{}, nil, err
	}
	time.Sleep(100 * time.Millisecond)
	before, dsBefore, err := usedMemory(ctx, h.ctl)
	if err != nil {
		return memoryResult{}, nil, err
	}
	ids := make([][]string, len(threads))
	workers := min(len(threads), 8)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := w; t < len(threads); t += workers {
				tids, err := agentThread(ctx, s, threads[t], h.agent)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				ids[t] = tids
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return memoryResult{}, nil, fmt.Errorf("fixture: %w", firstErr)
	}
	_ = client.Close()
	time.Sleep(300 * time.Millisecond) // let Redis free the closed clients
	after, dsAfter, err := usedMemory(ctx, h.ctl)
	if err != nil {
		return memoryResult{}, nil, err
	}
	n := len(threads) * cfg.steps
	changed, writes := h.agent.avgBytes()
	return memoryResult{
		Checkpoints: n, UsedBefore: before, UsedAfter: after,
		PerCheckpoint:  float64(after-before) / float64(n),
		DatasetPerCkpt: float64(dsAfter-dsBefore) / float64(n),
		ChangedBytes:   changed, WriteBytes: writes,
		StateBytesAtS50: h.agent.stateBytes(min(50, len(h.agent)-1)),
		Method: fmt.Sprintf("INFO memory used_memory before and after writing %d threads × %d steps (Put + 2 PutWrites of 3 writes each per step, events on) on a fresh prefix, "+
			"the writing client closed before the second reading; value bytes are the msgpack bytes of the values, uncompressed", len(threads), cfg.steps),
	}, ids, nil
}

// agentThread writes every step of tab to thread: a Put, then the 3
// writes of each of the 2 tasks. It returns the checkpoint IDs.
func agentThread(ctx context.Context, s *redissaver.Saver, thread string, tab table) ([]string, error) {
	cfg := checkpoint.Config{ThreadID: thread}
	ids := make([]string, 0, len(tab))
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range tab {
		st := &tab[i]
		nv := st.changed
		if i == 0 {
			nv = st.all
		}
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: ts,
			ChannelValues: st.values, ChannelVersions: st.versions, VersionsSeen: st.seen}
		var err error
		cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"source": "loop", "step": i, "run_id": thread}, nv)
		if err != nil {
			return nil, err
		}
		for task, writes := range st.writes {
			if err := s.PutWrites(ctx, cfg, writes, taskIDs[task], ""); err != nil {
				return nil, err
			}
		}
		ids = append(ids, cfg.CheckpointID)
	}
	return ids, nil
}

// usedMemory returns INFO memory's used_memory and used_memory_dataset.
func usedMemory(ctx context.Context, c *redis.Client) (used, dataset int64, err error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, 0, err
	}
	used, err = infoField(info, "used_memory")
	if err != nil {
		return 0, 0, err
	}
	dataset, _ = infoField(info, "used_memory_dataset")
	return used, dataset, nil
}

// infoField returns the integer field name of an INFO reply.
func infoField(info, name string) (int64, error) {
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && k == name {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO has no %s", name)
}

// infoString returns the field name of an INFO reply, or "".
func infoString(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == name {
			return v
		}
	}
	return ""
}
