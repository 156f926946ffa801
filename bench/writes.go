package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// written is a checkpoint a Put pass stored, with the step it was.
type written struct {
	cfg  checkpoint.Config
	step int
}

// writer is the state of one goroutine of a Put pass: the thread it is
// writing and the checkpoints it wrote.
type writer struct {
	thread  string
	threads []string
	step    int
	first   bool
	parent  checkpoint.Config
	cps     []written
}

// putPass measures Put in the agent workload: goroutine w writes threads of
// len(tab) steps ("<tag>-w<w>-t<k>"), its first one starting at step
// w*len(tab)/conc so that every concurrency sees the same mix of state
// sizes. It returns the pass and each goroutine's writer.
func (h *harness) putPass(s *redissaver.Saver, op, tag string, tab table, conc, maxOps, warmup int) (*pass, []*writer) {
	ws := make([]*writer, conc)
	for w := range ws {
		ws[w] = &writer{step: w * len(tab) / conc, first: true, cps: make([]written, 0, (maxOps+warmup)/conc+2)}
		ws[w].thread = fmt.Sprintf("%s-w%d-t0", tag, w)
		ws[w].threads = append(ws[w].threads, ws[w].thread)
		ws[w].parent = checkpoint.Config{ThreadID: ws[w].thread}
	}
	ts := time.Now().UTC().Format(time.RFC3339Nano)
	return &pass{
		impl: implOurs, op: op, conc: conc, maxOps: maxOps, warmup: warmup, budget: h.cfg.budget, meter: h.meter,
		do: func(ctx context.Context, w, _ int) error {
			wr := ws[w]
			st := &tab[wr.step]
			nv := st.changed
			if wr.first {
				nv = st.all
			}
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: ts,
				ChannelValues: st.values, ChannelVersions: st.versions, VersionsSeen: st.seen}
			md := checkpoint.Metadata{"source": "loop", "step": wr.step, "run_id": wr.thread}
			cfg, err := s.Put(ctx, wr.parent, cp, md, nv)
			if err != nil {
				return err
			}
			wr.cps = append(wr.cps, written{cfg, wr.step})
			wr.parent, wr.first = cfg, false
			if wr.step++; wr.step == len(tab) {
				wr.thread = fmt.Sprintf("%s-w%d-t%d", tag, w, len(wr.threads))
				wr.threads = append(wr.threads, wr.thread)
				wr.parent, wr.step, wr.first = checkpoint.Config{ThreadID: wr.thread}, 0, true
			}
			return nil
		},
	}, ws
}

// putWritesPass measures PutWrites: each operation stores the 3 writes of
// one of the 2 tasks of a step against a checkpoint the Put pass wrote
// (goroutine w uses the checkpoints of the Put pass's goroutine w, two
// operations per checkpoint; when they run out it starts over with new task
// IDs). The Put pass must have run (a chunk of it at least) before.
func (h *harness) putWritesPass(s *redissaver.Saver, tab table, ws []*writer, conc, maxOps, warmup int) *pass {
	counts := make([]int, conc)
	return &pass{
		impl: implOurs, op: "PutWrites", conc: conc, maxOps: maxOps, warmup: warmup, budget: h.cfg.budget, meter: h.meter,
		do: func(ctx context.Context, w, _ int) error {
			var list []written
			if w < len(ws) && len(ws[w].cps) > 0 {
				list = ws[w].cps
			} else {
				for _, wr := range ws { // this goroutine's Put twin wrote nothing
					if len(wr.cps) > 0 {
						list = wr.cps
						break
					}
				}
			}
			if len(list) == 0 {
				return fmt.Errorf("the Put pass wrote no checkpoint")
			}
			j := counts[w]
			counts[w]++
			target := list[(j/2)%len(list)]
			task := taskIDs[j%2]
			if round := (j / 2) / len(list); round > 0 {
				task += "-r" + strconv.Itoa(round)
			}
			return s.PutWrites(ctx, target.cfg, tab[target.step].writes[j%2], task, "")
		},
	}
}
