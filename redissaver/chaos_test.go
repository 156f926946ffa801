package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// The chaos test: workers, each with its own Saver of one prefix (the
// options of saverVariants), run random operations at once on a few
// threads: puts, forks, re-sent puts, pending writes, reads, listings,
// delta histories, deletions of threads and runs, copies, sweeps and prunes. No
// reference can say what a read returns while others write, so every
// answer is checked against what holds whatever the interleaving:
//
//   - nothing is lost (no key is deleted behind the savers' backs), so no
//     call answers checkpoint.ErrDataLoss, and each call answers only the
//     errors its contract allows in a race (a copy whose target was written
//     meanwhile, pending writes to a checkpoint deleted meanwhile);
//   - a channel's value is the one put under its version (every value is a
//     function of its channel and version), and a pending write belongs to
//     the checkpoint it is read with (every write names its checkpoint and
//     task); a tuple's parent is in its thread and namespace;
//   - a listing never repeats a checkpoint, lists the newest first, and
//     only of the thread and namespace asked;
//   - a checkpoint read holds a value only for versions put with one, and
//     for every version its own Put wrote with one (channel "c" is a delta
//     channel: most of its versions are put without a value; a version a
//     Put names but does not write, whose value is not in the namespace,
//     reads as absent);
//   - a delta history holds only writes of the target's ancestors, oldest
//     first, from no further up than the nearest ancestor whose own Put
//     wrote a value of the channel, and its seed is the value of an
//     ancestor up to that one (every checkpoint's parent and versions are
//     known, and never change);
//   - once every worker stopped and every lease ran out (one saver writes
//     with a lease of chaosLease, so threads expire during the run), Check
//     finds no violation, every checkpoint of every thread reads back by
//     id, and every delta history is exactly the one a walk of GetTuple
//     calls finds.
//
// REDCHECK_CHAOS_SEEDS and REDCHECK_CHAOS_OPS (operations per worker) run
// it longer.
func TestConcurrentChaos(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		_, rdb := redistest.Mini(t)
		forChaosSeeds(t, rdb)
	})
	t.Run("redis", func(t *testing.T) { forChaosSeeds(t, redistest.Real(t)) })
}

func forChaosSeeds(t *testing.T, rdb redis.UniversalClient) {
	seeds, ops := envInt(t, "REDCHECK_CHAOS_SEEDS", 2), envInt(t, "REDCHECK_CHAOS_OPS", 150)
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { newChaos(t, rdb).run(seed, ops) })
	}
}

// A smaller universe than the model's, so that the workers meet often.
var (
	chaosThreads  = []string{"c 0", "c:1", "c{2}"}
	chaosNS       = []string{"", "sub:a"}
	chaosChannels = []string{"a", "b", "c"}
	chaosTasks    = []string{"task1", "task2"}
)

type chaos struct {
	t      *testing.T
	ctx    context.Context
	savers []*redissaver.Saver
	names  []string
	// version counts the channel versions handed out, across workers.
	version atomic.Int64
	mu      sync.Mutex
	// seen: per thread and namespace, the checkpoints put there (some since
	// deleted), with their channel versions.
	seen map[string][]checkpoint.Checkpoint
	// byID: every checkpoint put, by its ID (IDs are never reused with
	// other content: a copy or a Put sent again keeps it).
	byID map[string]chaosCheckpoint
	// calm: no deletions or prunes (odd seeds; threads still expire), so
	// that threads grow long chains, and delta histories walk far.
	calm bool
	// failed: the first violation; the workers stop at it.
	failed atomic.Pointer[string]
	// log: every operation's end, in the order they ended, for the report.
	logMu sync.Mutex
	log   []string
}

// logf records an operation that ended.
func (c *chaos) logf(format string, args ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	c.log = append(c.log, fmt.Sprintf("%4d ", len(c.log))+fmt.Sprintf(format, args...))
}

// report is the first violation with the last operations before it.
func (c *chaos) report() string {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if dir := os.Getenv("REDCHECK_CHAOS_LOG"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(c.t.Name(), "/", "-")+".log"), []byte(strings.Join(c.log, "\n")), 0o644)
	}
	tail := c.log[max(0, len(c.log)-40):]
	return fmt.Sprintf("%s\n\nthe last operations to end (of %d), in the order they ended:\n%s", *c.failed.Load(), len(c.log),
		strings.Join(tail, "\n"))
}

func newChaos(t *testing.T, rdb redis.UniversalClient) *chaos {
	c := &chaos{t: t, ctx: testctx.Context(t), seen: map[string][]checkpoint.Checkpoint{}, byID: map[string]chaosCheckpoint{}}
	prefix := redistest.Prefix(t)
	c.savers, c.names = saverVariants(t, c.ctx, rdb, prefix)
	// A lease short enough to run out during the run: its threads expire
	// unless another saver writes them meanwhile.
	s, err := redissaver.New(c.ctx, rdb, redissaver.Options{Prefix: prefix, Shards: 2, AcceptEviction: true, TTL: chaosLease})
	if err != nil {
		t.Fatal(err)
	}
	c.savers, c.names = append(c.savers, s), append(c.names, "lease")
	return c
}

// chaosLease is the lease of the chaos test's "lease" saver.
const chaosLease = 150 * time.Millisecond

// chaosCheckpoint is what a delta history depends on: a checkpoint's parent
// ("" for a root), its channel versions, and those its own Put wrote.
type chaosCheckpoint struct {
	parent   string
	versions map[string]string
	own      map[string]string
}

func (c *chaos) run(seed uint64, ops int) {
	c.calm = seed%2 == 1
	var wg sync.WaitGroup
	for w := range 2 * len(c.savers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := &chaosWorker{c: c, rng: rand.New(rand.NewPCG(seed, uint64(w))), s: c.savers[w%len(c.savers)],
				name: fmt.Sprintf("worker %d (%s)", w, c.names[w%len(c.savers)])}
			for range ops {
				if c.failed.Load() != nil {
					return
				}
				k.step()
			}
		}()
	}
	wg.Wait()
	if c.failed.Load() != nil {
		// What the store holds now, for the report.
		v, err := violations(c.ctx, c.savers[0], "")
		c.t.Fatalf("%s\n\nCheck now: %v %v", c.report(), v, err)
	}
	c.settled()
}

// fail records the first violation; run reports it once the workers stop.
func (c *chaos) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.failed.CompareAndSwap(nil, &msg)
}

// settled checks the store once every worker stopped: Check through each
// saver, every checkpoint listed is well formed, and 60 of them (evenly
// spaced, all when fewer) read back by id through each saver and have the
// delta histories a walk finds.
func (c *chaos) settled() {
	// Every lease of the "lease" saver runs out; Sweep retires those threads.
	time.Sleep(chaosLease + 50*time.Millisecond)
	if _, err := c.savers[0].Sweep(c.ctx); err != nil {
		c.t.Fatalf("Sweep after the run: %v", err)
	}
	for i, s := range c.savers {
		v, err := violations(c.ctx, s, "")
		if err != nil || len(v) > 0 {
			c.t.Fatalf("Check through %s: %v %v", c.names[i], v, err)
		}
	}
	all, err := collectList(c.savers[0].List(c.ctx, checkpoint.ListQuery{}))
	if err != nil {
		c.t.Fatalf("List of every thread: %v", err)
	}
	for _, tp := range all {
		c.checkTuple("List of every thread", tp)
	}
	all = spread(all, 60)
	for _, tp := range all {
		for i, s := range c.savers {
			got, err := s.GetTuple(c.ctx, tp.Config)
			if err != nil {
				c.t.Fatalf("GetTuple %+v through %s after the run: %v", tp.Config, c.names[i], err)
			}
			c.checkTuple("GetTuple after the run", got)
		}
	}
	c.settledHistories(all)
	if f := c.failed.Load(); f != nil {
		c.t.Fatal(*f)
	}
}

// chaosValue is the value of a channel at a version: its channel and
// version, padded so that some values are compressed and some exceed the
// 32 KiB a read keeps out of Lua.
func chaosValue(ch, version string) string {
	v := ch + "=" + version
	n := chaosVersionNumber(version)
	switch {
	case n%11 == 0:
		return v + strings.Repeat("L", 40<<10)
	case n%3 == 0:
		return v + strings.Repeat("m", 2000)
	}
	return v
}

// chaosHasValue reports whether a version is put with a value: always but
// for the delta channel "c", whose versions mostly have none (its history
// then walks up to the nearest ancestor whose version has one).
func chaosHasValue(ch, version string) bool {
	return ch != "c" || chaosVersionNumber(version)%4 == 0
}

// chaosVersionNumber is the counter a version was made from.
func chaosVersionNumber(version string) int {
	n, _ := strconv.Atoi(strings.TrimLeft(version[:12], "0"))
	return n
}

// chaosWrite is the value of a pending write: the checkpoint it is put
// against, its task and index.
func chaosWrite(id, task string, idx int) string { return fmt.Sprintf("w|%s|%s|%d", id, task, idx) }

// checkTuple records a violation in a tuple read.
func (c *chaos) checkTuple(op string, tp *checkpoint.Tuple) {
	if tp.ParentConfig != nil && (tp.ParentConfig.ThreadID != tp.Config.ThreadID || tp.ParentConfig.CheckpointNS != tp.Config.CheckpointNS) {
		c.fail("%s: %+v has the parent %+v", op, tp.Config, *tp.ParentConfig)
	}
	if tp.Config.CheckpointID != tp.Checkpoint.ID {
		c.fail("%s: config %+v of checkpoint %q", op, tp.Config, tp.Checkpoint.ID)
	}
	for ch, v := range tp.Checkpoint.ChannelValues {
		ver, ok := tp.Checkpoint.ChannelVersions[ch]
		if want := chaosValue(ch, ver); !ok || !chaosHasValue(ch, ver) || v != want {
			c.fail("%s: %+v channel %q version %q holds %.60q, want %.60q", op, tp.Config, ch, ver, v, want)
		}
	}
	known, _ := c.checkpointOf(tp.Checkpoint.ID)
	for ch, ver := range known.own {
		if _, ok := tp.Checkpoint.ChannelValues[ch]; !ok && chaosHasValue(ch, ver) {
			c.fail("%s: %+v has no value for channel %q version %q, which its Put wrote", op, tp.Config, ch, ver)
		}
	}
	for _, w := range tp.PendingWrites {
		s, _ := w.Value.(string)
		if !strings.HasPrefix(s, "w|"+tp.Checkpoint.ID+"|"+w.TaskID+"|") || !slices.Contains(chaosChannels, w.Channel) {
			c.fail("%s: %+v holds the write %q %q %q", op, tp.Config, w.TaskID, w.Channel, s)
		}
	}
}

// checkHistory records a violation in a delta history of channel ch read
// while others write: its writes are the channel's, of ancestors of target
// ("" for the latest, whose ancestors are not known), oldest first, none
// above the nearest ancestor whose version of ch has a value, and the seed
// is that ancestor's value. A history may stop short of it (an ancestor
// deleted before the walk ends it) and miss writes made during the walk.
func (c *chaos) checkHistory(op, target, ch string, h checkpoint.DeltaHistory) {
	for _, w := range h.Writes {
		if s, _ := w.Value.(string); w.Channel != ch || !strings.HasPrefix(s, "w|") {
			c.fail("%s: channel %q has the write %q %q", op, ch, w.Channel, s)
		}
	}
	if target == "" {
		if seed, _ := h.Seed.(string); h.HasSeed && !strings.HasPrefix(seed, ch+"=") {
			c.fail("%s: channel %q has the seed %.60q", op, ch, seed)
		}
		return
	}
	// The ancestors from the parent up to the nearest whose Put wrote a
	// value of ch, nearest first, and the seeds they may hold.
	c.mu.Lock()
	var chain []string
	seeds := map[string]int{} // a seed, and the furthest ancestor holding it
	for id := c.byID[target].parent; id != ""; id = c.byID[id].parent {
		cp, ok := c.byID[id]
		if !ok {
			break
		}
		chain = append(chain, id)
		if v, ok := cp.versions[ch]; ok && chaosHasValue(ch, v) {
			seeds[chaosValue(ch, v)] = len(chain) - 1
		}
		if v, ok := cp.own[ch]; ok && chaosHasValue(ch, v) {
			break
		}
	}
	c.mu.Unlock()
	top := len(chain) - 1 // the furthest ancestor a write may come from
	if h.HasSeed {
		got, _ := h.Seed.(string)
		at, ok := seeds[got]
		if !ok {
			c.fail("%s: channel %q of %q has the seed %.60q, held by no ancestor up to its nearest written value (chain %v)", op, ch, target, got, chain)
			return
		}
		top = at
	}
	// Oldest first: each write's checkpoint at or below the one before it.
	for _, w := range h.Writes {
		s, _ := w.Value.(string)
		id, _, _ := strings.Cut(strings.TrimPrefix(s, "w|"), "|")
		for top >= 0 && chain[top] != id {
			top--
		}
		if top < 0 {
			c.fail("%s: channel %q of %q has the write %q: not of an ancestor up to its seed, or out of order (chain %v)", op, ch, target, s, chain)
			return
		}
	}
}

// spread returns n of the tuples, evenly spaced, or all when they are
// fewer: what the settled checks read again, so that a long run's store does
// not make them slow.
func spread(all []*checkpoint.Tuple, n int) []*checkpoint.Tuple {
	if len(all) <= n {
		return all
	}
	out := make([]*checkpoint.Tuple, n)
	for i := range out {
		out[i] = all[i*len(all)/n]
	}
	return out
}

// settledHistories compares, once nothing writes, the delta history of every
// channel of each of the tuples with what a walk of GetTuple calls up its
// parents finds.
func (c *chaos) settledHistories(all []*checkpoint.Tuple) {
	s := c.savers[0]
	read := map[checkpoint.Config]*checkpoint.Tuple{}
	get := func(cfg checkpoint.Config) *checkpoint.Tuple {
		if tp, ok := read[cfg]; ok {
			return tp
		}
		tp, err := s.GetTuple(c.ctx, cfg)
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			c.t.Fatalf("GetTuple %+v after the run: %v", cfg, err)
		}
		read[cfg] = tp
		return tp
	}
	for _, tp := range all {
		read[tp.Config] = tp
	}
	for _, tp := range all {
		hist, err := s.DeltaChannelHistory(c.ctx, tp.Config, chaosChannels)
		if err != nil {
			c.t.Fatalf("DeltaChannelHistory %+v after the run: %v", tp.Config, err)
		}
		for _, ch := range chaosChannels {
			var want checkpoint.DeltaHistory
			var groups [][]checkpoint.PendingWrite // nearest ancestor first
			for p := tp.ParentConfig; p != nil; {
				anc := get(*p)
				if anc == nil {
					break // deleted: the walk ends here
				}
				var ws []checkpoint.PendingWrite
				for _, w := range anc.PendingWrites {
					if w.Channel == ch {
						ws = append(ws, w)
					}
				}
				groups = append(groups, ws)
				if v, ok := anc.Checkpoint.ChannelValues[ch]; ok {
					want.Seed, want.HasSeed = v, true
					break
				}
				p = anc.ParentConfig
			}
			for i := len(groups) - 1; i >= 0; i-- {
				want.Writes = append(want.Writes, groups[i]...)
			}
			got := hist[ch]
			if got.HasSeed != want.HasSeed || got.Seed != want.Seed || !slices.Equal(got.Writes, want.Writes) {
				c.t.Fatalf("DeltaChannelHistory %+v channel %q after the run:\n got seed %v %.60v, writes %v\nwant seed %v %.60v, writes %v",
					tp.Config, ch, got.HasSeed, got.Seed, got.Writes, want.HasSeed, want.Seed, want.Writes)
			}
		}
	}
}

// allowed records a violation unless err is nil or one of ok.
func (c *chaos) allowed(op string, err error, ok ...error) bool {
	c.logf("%s: %v", op, err)
	if err == nil {
		return true
	}
	for _, e := range ok {
		if errors.Is(err, e) {
			return false
		}
	}
	c.fail("%s: %v", op, err)
	return false
}

type chaosWorker struct {
	c    *chaos
	rng  *rand.Rand
	s    *redissaver.Saver
	name string
	// last: this worker's last Put, sent again as a client re-sending a call.
	last *chaosPut
}

type chaosPut struct {
	cfg checkpoint.Config
	cp  checkpoint.Checkpoint
	md  checkpoint.Metadata
	nv  map[string]string
}

func (k *chaosWorker) pick(list []string) string { return list[k.rng.IntN(len(list))] }

// known returns a checkpoint put in the thread and namespace (maybe since
// deleted): the last one put with newest, else any; false when none was.
func (k *chaosWorker) known(th, ns string, newest bool) (checkpoint.Checkpoint, bool) {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	cps := k.c.seen[addr(th, ns)]
	if len(cps) == 0 {
		return checkpoint.Checkpoint{}, false
	}
	if newest {
		return cps[len(cps)-1], true
	}
	return cps[k.rng.IntN(len(cps))], true
}

// remember records a checkpoint put in a thread and namespace as a child of
// parent ("" for a root), with the versions its Put wrote.
func (k *chaosWorker) remember(th, ns, parent string, cp checkpoint.Checkpoint, own map[string]string) {
	k.c.mu.Lock()
	defer k.c.mu.Unlock()
	k.c.seen[addr(th, ns)] = append(k.c.seen[addr(th, ns)], cp)
	k.c.byID[cp.ID] = chaosCheckpoint{parent: parent, versions: cp.ChannelVersions, own: own}
}

// checkpointOf returns what the test knows of a checkpoint.
func (c *chaos) checkpointOf(id string) (chaosCheckpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, ok := c.byID[id]
	return cp, ok
}

func (k *chaosWorker) step() {
	ctx, c, s := k.c.ctx, k.c, k.s
	th, ns := k.pick(chaosThreads), k.pick(chaosNS)
	op := func(what string) string { return fmt.Sprintf("%s: %s thread %q ns %q", k.name, what, th, ns) }
	r := k.rng.IntN(100)
	if k.c.calm && (r >= 85 && r < 91 || r >= 96) {
		r = 0 // a calm run: a Put where the others delete and prune
	}
	switch {
	case r < 30:
		k.put(th, ns)
	case r < 34:
		// A fork: a copy of a checkpoint beside it, no new versions.
		src, ok := k.known(th, ns, false)
		if !ok {
			return
		}
		tp, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: src.ID})
		if !c.allowed(op("GetTuple before a fork"), err, checkpoint.ErrNotFound) {
			return
		}
		c.checkTuple(op("GetTuple before a fork"), tp)
		cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
		if tp.ParentConfig != nil {
			cfg.CheckpointID = tp.ParentConfig.CheckpointID
		}
		cp := tp.Checkpoint
		cp.ID = checkpoint.NewID()
		if _, err := s.Put(ctx, cfg, cp, checkpoint.Metadata{"source": "fork", "step": 1}, map[string]string{}); c.allowed(op("fork"), err) {
			k.remember(th, ns, cfg.CheckpointID, cp, nil)
		}
	case r < 37:
		if p := k.last; p != nil {
			_, err := s.Put(ctx, p.cfg, p.cp, p.md, p.nv)
			c.allowed(op("Put sent again"), err)
		}
	case r < 52:
		cp, ok := k.known(th, ns, k.rng.IntN(2) == 0)
		if !ok {
			return
		}
		task := k.pick(chaosTasks)
		var writes []checkpoint.Write
		for i := range 1 + k.rng.IntN(3) {
			writes = append(writes, checkpoint.Write{Channel: k.pick(chaosChannels), Value: chaosWrite(cp.ID, task, i)})
		}
		err := s.PutWrites(ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: cp.ID}, writes, task, "")
		c.allowed(op("PutWrites"), err, checkpoint.ErrNotFound)
	case r < 67:
		cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
		if cp, ok := k.known(th, ns, false); ok && k.rng.IntN(2) == 0 {
			cfg.CheckpointID = cp.ID
		}
		tp, err := s.GetTuple(ctx, cfg)
		if c.allowed(op("GetTuple"), err, checkpoint.ErrNotFound) {
			c.checkTuple(op("GetTuple"), tp)
			if tp.Config.ThreadID != th || tp.Config.CheckpointNS != ns || (cfg.CheckpointID != "" && tp.Config.CheckpointID != cfg.CheckpointID) {
				c.fail("%s: answered %+v", op("GetTuple"), tp.Config)
			}
		}
	case r < 77:
		q := checkpoint.ListQuery{ThreadID: th}
		if k.rng.IntN(4) == 0 {
			q.ThreadID = ""
		}
		if k.rng.IntN(2) == 0 {
			q.CheckpointNS = checkpoint.NS(ns)
		}
		seen := map[checkpoint.Config]bool{}
		var err error
		last := ""
		for tp, lerr := range s.List(ctx, q) {
			if err = lerr; err != nil {
				break
			}
			if seen[tp.Config] {
				c.fail("%s: %+v listed twice", op("List"), tp.Config)
			}
			if last != "" && tp.Config.CheckpointID > last {
				c.fail("%s: %+v listed after %s: not newest first", op("List"), tp.Config, last)
			}
			last = tp.Config.CheckpointID
			seen[tp.Config] = true
			c.checkTuple(op("List"), tp)
			if (q.ThreadID != "" && tp.Config.ThreadID != q.ThreadID) || (q.CheckpointNS != nil && tp.Config.CheckpointNS != ns) {
				c.fail("%s: listed %+v", op("List"), tp.Config)
			}
		}
		c.allowed(fmt.Sprintf("%s: List thread %q ns %v", k.name, q.ThreadID, q.CheckpointNS != nil), err)
	case r < 85:
		cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
		if cp, ok := k.known(th, ns, false); ok && k.rng.IntN(2) == 0 {
			cfg.CheckpointID = cp.ID
		}
		channels := chaosChannels[:1+k.rng.IntN(len(chaosChannels))]
		if k.rng.IntN(2) == 0 {
			channels = []string{"c"} // the delta channel, whose walks are long
		}
		hist, err := s.DeltaChannelHistory(ctx, cfg, channels)
		if !c.allowed(op("DeltaChannelHistory"), err, checkpoint.ErrNotFound) {
			return
		}
		for ch, h := range hist {
			c.checkHistory(op("DeltaChannelHistory"), cfg.CheckpointID, ch, h)
		}
	case r < 88:
		c.allowed(op("DeleteThread"), s.DeleteThread(ctx, th))
	case r < 91:
		c.allowed(op("DeleteForRuns"), s.DeleteForRuns(ctx, []string{"run-" + ns}))
	case r < 95:
		dst := k.pick(chaosThreads)
		// The source deleted or pruned meanwhile (ErrNotFound), the target
		// written meanwhile (ErrInvalidConfig).
		c.allowed(op("CopyThread to "+dst), s.CopyThread(ctx, th, dst), checkpoint.ErrNotFound, checkpoint.ErrInvalidConfig)
	case r < 96:
		_, err := s.Sweep(ctx)
		c.allowed(op("Sweep"), err)
	case r < 98:
		// Check while the others write: nothing is lost, so it finds nothing.
		thread := th
		if k.rng.IntN(3) == 0 {
			thread = ""
		}
		v, err := violations(ctx, s, thread)
		if c.allowed(fmt.Sprintf("%s: Check thread %q", k.name, thread), err) && len(v) > 0 {
			c.fail("%s: Check thread %q while others write found %v", k.name, thread, v)
		}
	default:
		strategy := checkpoint.PruneKeepLatest
		if k.rng.IntN(4) == 0 {
			strategy = checkpoint.PruneDelete
		}
		c.allowed(op("Prune "+string(strategy)), s.Prune(ctx, []string{th}, strategy))
	}
}

// put writes the next checkpoint of a thread and namespace: a child of one
// put there before (maybe deleted since), or a root; each channel changes
// with some chance, and every new version comes with its value.
func (k *chaosWorker) put(th, ns string) {
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
	versions := map[string]string{}
	if parent, ok := k.known(th, ns, k.rng.IntN(5) < 3); ok && k.rng.IntN(5) > 0 {
		cfg.CheckpointID = parent.ID
		for ch, v := range parent.ChannelVersions {
			versions[ch] = v
		}
	}
	values, nv := map[string]any{}, map[string]string{}
	for _, ch := range chaosChannels {
		if versions[ch] == "" || k.rng.IntN(3) == 0 {
			v := fmt.Sprintf("%012d.%08x", k.c.version.Add(1), k.rng.Uint32())
			versions[ch], nv[ch] = v, v
		}
		if v := versions[ch]; chaosHasValue(ch, v) {
			values[ch] = chaosValue(ch, v)
		}
	}
	cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: "2026-11-28T00:00:00Z", ChannelValues: values,
		ChannelVersions: versions, VersionsSeen: map[string]map[string]string{}}
	md := checkpoint.Metadata{"source": "loop", "step": 1, "run_id": "run-" + ns}
	if _, err := k.s.Put(k.c.ctx, cfg, cp, md, nv); k.c.allowed(fmt.Sprintf("%s: Put thread %q ns %q", k.name, th, ns), err) {
		k.remember(th, ns, cfg.CheckpointID, cp, nv)
		k.last = &chaosPut{cfg: cfg, cp: cp, md: md, nv: nv}
	}
}

// TestConcurrentChaosCluster runs it on a 3-master Cluster (make
// test-cluster).
func TestConcurrentChaosCluster(t *testing.T) {
	redistest.RequireCluster(t)
	forChaosSeeds(t, redistest.StartCluster(t, 3, 0).Client(t))
}
