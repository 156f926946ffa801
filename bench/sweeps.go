package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// concurrencyLevel measures, at one concurrency, the limit, then Put,
// PutWrites, and the latest and by-id reads of the agent workload (at
// concurrency 1 also Put without events and the List reads), interleaved in
// -rounds rounds.
func (h *harness) concurrencyLevel(ctx context.Context, conc int) error {
	ps := h.limitPasses(ctx, conc)
	s, err := h.newSaver(ctx, h.client, "c"+strconv.Itoa(conc), redissaver.Options{})
	if err != nil {
		return err
	}
	warm := max(conc, 20)
	put, ws := h.putPass(s, "Put", "agent", h.agent, conc, h.cfg.ops, warm)
	ps = append(ps, put, h.putWritesPass(s, h.agent, ws, conc, h.cfg.ops, warm))
	if conc == 1 {
		// The same Put without events, to show what publishing costs.
		quiet, err := h.newSaver(ctx, h.client, "c1-quiet", redissaver.Options{Events: redissaver.Events{Disabled: true}})
		if err != nil {
			return err
		}
		p, _ := h.putPass(quiet, "Put.events-off", "agent", h.agent, conc, h.cfg.ops, warm)
		ps = append(ps, p)
	}
	ps = append(ps, h.readPass("GetTuple.latest", conc, h.cfg.ops), h.readPass("GetTuple.byid", conc, h.cfg.ops))
	if conc == 1 {
		ps = append(ps, h.readPass("GetTuple.byid.repeat", conc, h.cfg.ops),
			h.readPass("List.full", conc, min(h.cfg.ops, 1000)), h.readPass("List.page10", conc, h.cfg.ops))
	}
	h.runGroup(ctx, h.cfg.rounds, ps...)
	return nil
}

// stateSweep measures Put, latest GetTuple and GetTuple by id at
// concurrency 1 with a state of each size: 90% a message list that changes
// every step, 10% the other 9 channels. The by-id reads go through a second
// saver: get_tuple.lua reads each checkpoint, with its values up to 32 KiB,
// without them beyond (a plain HMGET reads them). Each size gets a fresh prefix, deleted afterwards.
func (h *harness) stateSweep(ctx context.Context) error {
	for _, size := range h.cfg.stateSizes {
		label := "state=" + byteSize(size)
		steps := 100
		if size > 256<<10 {
			steps = 20 // a table of 1 MB states holds 20 MB of values
		}
		tab := fixedTable(steps, size)
		h.stateBytes[label] = tab.stateBytes(0)
		s, err := h.newSaver(ctx, h.client, "state"+strconv.Itoa(size), redissaver.Options{})
		if err != nil {
			return err
		}
		ops := max(10, min(h.cfg.ops, (256<<20)/size)) // at most ~256 MB of values into Redis
		put, ws := h.putPass(s, "Put/"+label, "state", tab, 1, ops, 3)
		get := &pass{impl: implOurs, op: "GetTuple.latest/" + label, conc: 1, maxOps: ops, warmup: 3,
			budget: h.cfg.budget, meter: h.meter,
			do: func(ctx context.Context, _, _ int) error {
				wr := ws[0]
				if len(wr.cps) == 0 {
					return fmt.Errorf("nothing written")
				}
				_, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: wr.cps[len(wr.cps)-1].cfg.ThreadID})
				return err
			}}
		cold, err := h.newSaver(ctx, h.client, "state"+strconv.Itoa(size), redissaver.Options{})
		if err != nil {
			return err
		}
		byid := &pass{impl: implOurs, op: "GetTuple.byid/" + label, conc: 1, maxOps: ops, warmup: 3,
			budget: h.cfg.budget, meter: h.meter,
			do: func(ctx context.Context, _, i int) error {
				cps := ws[0].cps
				if len(cps) == 0 {
					return fmt.Errorf("nothing written")
				}
				cfg := cps[(i*7919)%len(cps)].cfg
				tup, err := cold.GetTuple(ctx, cfg)
				if err == nil && tup.Checkpoint.ID != cfg.CheckpointID {
					err = fmt.Errorf("read %s, want %s", tup.Checkpoint.ID, cfg.CheckpointID)
				}
				return err
			}}
		h.runGroup(ctx, h.cfg.rounds, put, get, byid)
		for _, th := range ws[0].threads {
			if err := s.DeleteThread(ctx, th); err != nil {
				return err
			}
		}
	}
	return nil
}

// historySweep measures the latest and by-id GetTuple on threads of each
// history length, all built first and then measured in interleaved rounds.
// Their checkpoints are small (10 channels of about 100 bytes, 2 changing
// per step, no pending writes) so that 100,000 of them fit in memory: the
// sweep is about the length of the history, not the size of the state.
func (h *harness) historySweep(ctx context.Context) error {
	s, err := h.newSaver(ctx, h.client, "history", redissaver.Options{})
	if err != nil {
		return err
	}
	// By-id reads through a saver that remembers no read: the sweep is about
	// the history, and a short one would be read back from hints.
	cold, err := h.newSaver(ctx, h.client, "history", redissaver.Options{})
	if err != nil {
		return err
	}
	values := make(map[string]any, len(channels))
	for k, ch := range channels {
		values[ch] = text(k, 100)
	}
	var ps []*pass
	for _, n := range h.cfg.history {
		thread := "h" + strconv.Itoa(n)
		ids, err := fillHistory(ctx, s, thread, values, 0, n)
		if err != nil {
			return fmt.Errorf("history fill of %d: %w", n, err)
		}
		label := "history=" + strconv.Itoa(n)
		ps = append(ps, &pass{impl: implOurs, op: "GetTuple.latest/" + label, conc: 1, maxOps: h.cfg.ops, warmup: 20,
			budget: h.cfg.budget, meter: h.meter,
			do: func(ctx context.Context, _, _ int) error {
				_, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: thread})
				return err
			}}, &pass{impl: implOurs, op: "GetTuple.byid/" + label, conc: 1, maxOps: h.cfg.ops, warmup: 20,
			budget: h.cfg.budget, meter: h.meter,
			do: func(ctx context.Context, _, i int) error {
				_, err := cold.GetTuple(ctx, checkpoint.Config{ThreadID: thread, CheckpointID: ids[(i*7919)%len(ids)]})
				return err
			}})
	}
	// Flatness compares points with each other: finer interleaving, so
	// that a burst of load from elsewhere lands on every point alike.
	h.runGroup(ctx, 3*h.cfg.rounds, ps...)
	return nil
}

// fillHistory adds count checkpoints to thread from 4 goroutines, each
// extending its own parent chain, and returns their IDs. Checkpoint number
// n (from start) changes "messages" and one other channel to version n+1.
func fillHistory(ctx context.Context, s *redissaver.Saver, thread string, values map[string]any, start, count int) ([]string, error) {
	const workers = 4
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ids      = make([]string, 0, count)
		firstErr error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			versions := make(map[string]string, len(channels))
			parent := checkpoint.Config{ThreadID: thread}
			for i := w; i < count; i += workers {
				n := start + i + 1
				v := version(n)
				nv := map[string]string{channels[0]: v, channels[1+n%9]: v}
				if len(versions) == 0 {
					for _, ch := range channels {
						versions[ch] = v
						nv[ch] = v
					}
				}
				versions[channels[0]], versions[channels[1+n%9]] = v, v
				cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "ts", ChannelValues: values, ChannelVersions: versions}
				cfg, err := s.Put(ctx, parent, cp, checkpoint.Metadata{"source": "loop", "step": n}, nv)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				ids = append(ids, cfg.CheckpointID)
				mu.Unlock()
				parent = cfg
			}
		}()
	}
	wg.Wait()
	return ids, firstErr
}

// byteSize formats a size as "1KB", "64KB", "1MB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KB"
	}
	return strconv.Itoa(n) + "B"
}
