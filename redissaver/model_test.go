package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/testctx"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// The differential model: random sequences of every operation of the
// saver, sent in turn through several Savers of one prefix (each with its
// own caches of generations and read hints, and its own options), and
// through memsaver, the reference. Every answer must be the reference's:
// the same tuples in the same order, the same histories, the same kind of
// error. Savers sharing a prefix see each other's writes only through Redis,
// so their predictions go stale in every way the operations allow: a thread
// deleted, pruned, copied over or re-put by another saver.
//
// A failure logs its seed and every operation of the run; REDCHECK_MODEL_OPS
// and REDCHECK_MODEL_SEEDS run it longer.

// TestSaverModel runs the model on miniredis and on a real Redis.
func TestSaverModel(t *testing.T) {
	t.Run("miniredis", func(t *testing.T) {
		_, rdb := redistest.Mini(t)
		forModelSeeds(t, rdb)
	})
	t.Run("redis", func(t *testing.T) { forModelSeeds(t, redistest.Real(t)) })
}

// TestSaverModelCluster runs it on a 3-master Cluster.
func TestSaverModelCluster(t *testing.T) {
	redistest.RequireCluster(t)
	forModelSeeds(t, redistest.StartCluster(t, 3, 0).Client(t))
}

func forModelSeeds(t *testing.T, rdb redis.UniversalClient) {
	seeds, ops := envInt(t, "REDCHECK_MODEL_SEEDS", 4), envInt(t, "REDCHECK_MODEL_OPS", 300)
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { newSaverModel(t, rdb, seed).run(ops) })
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// The model's universe: few threads, namespaces, channels, tasks and runs,
// so that operations meet each other.
var (
	// Every thread holds a byte keys.Encode escapes at the same place: Redis
	// orders checkpoints of equal IDs by their encoded threads, which is then
	// the order of the threads themselves, memsaver's.
	modelThreads  = []string{"t 0", "t:1", "t{2}", "té"}
	modelNS       = []string{"", "sub:a", "sub|b"}
	modelChannels = []string{"a", "b", "c", "d"}
	modelTasks    = []string{"task1", "task2", "task3"}
	modelRuns     = []string{"r0", "r1", "r2"}
	modelSpecial  = []string{checkpoint.ErrorChannel, checkpoint.InterruptChannel, checkpoint.ScheduledChannel, checkpoint.ResumeChannel}
)

type saverModel struct {
	t      *testing.T
	ctx    context.Context
	rng    *rand.Rand
	ref    *memsaver.Saver
	savers []*redissaver.Saver
	names  []string
	// ids: increasing checkpoint IDs; next is the first not yet put.
	ids  []string
	next int
	// seen: the IDs put per thread and namespace (some since deleted).
	seen    map[string][]string
	version int // a counter for channel versions
	log     []string
}

func newSaverModel(t *testing.T, rdb redis.UniversalClient, seed uint64) *saverModel {
	prefix := redistest.Prefix(t)
	m := &saverModel{t: t, ctx: testctx.Context(t), rng: rand.New(rand.NewPCG(seed, 0x5eed)),
		ref: memsaver.New(memsaver.Options{}), seen: map[string][]string{}}
	m.savers, m.names = saverVariants(t, m.ctx, rdb, prefix)
	for range 400 {
		m.ids = append(m.ids, checkpoint.NewID())
	}
	return m
}

// saverVariants returns Savers of one prefix (2 shards) with the options
// that change how a saver reads and writes: compression, page sizes, read
// hints or none, events off or with values, a TTL renewed on read.
func saverVariants(t *testing.T, ctx context.Context, rdb redis.UniversalClient, prefix string) ([]*redissaver.Saver, []string) {
	var savers []*redissaver.Saver
	var names []string
	for _, o := range []struct {
		name string
		opts redissaver.Options
	}{
		{"default", redissaver.Options{}},
		{"compress,page2", redissaver.Options{Compression: redissaver.Compression{Enabled: true, MinBytes: 64}, PageSize: 2}},
		{"page3", redissaver.Options{PageSize: 3}},
		{"noevents", redissaver.Options{Events: redissaver.Events{Disabled: true}}},
		{"ttl,values", redissaver.Options{TTL: time.Hour, RefreshOnRead: true, Events: redissaver.Events{IncludeValues: true}}},
	} {
		o.opts.Prefix, o.opts.Shards, o.opts.AcceptEviction = prefix, 2, true
		s, err := redissaver.New(ctx, rdb, o.opts)
		if err != nil {
			t.Fatal(err)
		}
		savers, names = append(savers, s), append(names, o.name)
	}
	return savers, names
}

func (m *saverModel) pick(list []string) string { return list[m.rng.IntN(len(list))] }

func (m *saverModel) saver() (int, *redissaver.Saver) {
	i := m.rng.IntN(len(m.savers))
	return i, m.savers[i]
}

func (m *saverModel) run(ops int) {
	for range ops {
		switch r := m.rng.IntN(100); {
		case r < 26:
			m.put()
		case r < 30:
			m.fork()
		case r < 48:
			m.putWrites()
		case r < 64:
			m.getTuple()
		case r < 78:
			m.list()
		case r < 86:
			m.delta()
		case r < 89:
			m.deleteThread()
		case r < 92:
			m.deleteRuns()
		case r < 95:
			m.copyThread()
		default:
			m.prune()
		}
	}
	for i, s := range m.savers {
		v, err := violations(m.ctx, s, "")
		if err != nil || len(v) > 0 {
			m.fail("Check through %s: %v %v", m.names[i], v, err)
		}
	}
}

func (m *saverModel) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s\n\noperations of this run:\n%s", fmt.Sprintf(format, args...), strings.Join(m.log, "\n"))
}

func (m *saverModel) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf("%3d ", len(m.log))+fmt.Sprintf(format, args...))
}

// sameErr fails unless got is the kind of error want is (nil, a checkpoint
// sentinel, or both some other error).
func (m *saverModel) sameErr(op string, want, got error) bool {
	m.t.Helper()
	if kind(want) != kind(got) {
		m.fail("%s: error %v, the reference's %v", op, got, want)
	}
	return want == nil
}

func kind(err error) string {
	for _, s := range []error{checkpoint.ErrNotFound, checkpoint.ErrInvalidConfig, checkpoint.ErrInvalidCheckpoint,
		checkpoint.ErrSerialization, checkpoint.ErrDataLoss} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	if err != nil {
		return "other"
	}
	return "nil"
}

func addr(th, ns string) string { return th + "\x00" + ns }

// knownID returns an ID put in the thread and namespace, or "" when none
// was.
func (m *saverModel) knownID(th, ns string) string {
	ids := m.seen[addr(th, ns)]
	if len(ids) == 0 {
		return ""
	}
	return ids[m.rng.IntN(len(ids))]
}

// value returns a random channel or write value: mostly small, sometimes
// over the compression threshold, rarely over the 32 KiB that a read keeps
// out of Lua.
func (m *saverModel) value() any {
	switch r := m.rng.IntN(100); {
	case r < 30:
		return int64(m.rng.IntN(1000))
	case r < 55:
		return fmt.Sprintf("s%d", m.rng.IntN(1000))
	case r < 80:
		return map[string]any{"n": int64(m.rng.IntN(9)), "list": []any{"x", int64(m.rng.IntN(9)), nil, true}}
	case r < 96:
		return strings.Repeat(string(rune('a'+m.rng.IntN(26))), 200+m.rng.IntN(3000))
	default:
		return strings.Repeat(fmt.Sprint(m.rng.IntN(10)), 20000+m.rng.IntN(30000))
	}
}

func (m *saverModel) nextVersion() string {
	m.version++
	return fmt.Sprintf("%012d.%08x", m.version, m.rng.Uint32())
}

func (m *saverModel) put() {
	i, s := m.saver()
	th, ns := m.pick(modelThreads), m.pick(modelNS)
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
	var base map[string]string
	switch r := m.rng.IntN(10); {
	case r < 2: // a root
	case r < 8:
		if latest, err := m.ref.GetTuple(m.ctx, cfg); err == nil {
			cfg.CheckpointID, base = latest.Checkpoint.ID, latest.Checkpoint.ChannelVersions
		}
	default: // any ID put there, maybe since deleted
		cfg.CheckpointID = m.knownID(th, ns)
		if p, err := m.ref.GetTuple(m.ctx, cfg); err == nil {
			base = p.Checkpoint.ChannelVersions
		}
	}
	var id string
	switch r := m.rng.IntN(100); {
	case r < 80 && m.next < len(m.ids):
		id = m.ids[m.next]
		m.next++
	case r < 90:
		id = m.knownID(th, ns) // a re-put
	}
	if id == "" || id == cfg.CheckpointID {
		id = m.ids[m.rng.IntN(len(m.ids))] // out of order, or a re-put
	}
	if id == cfg.CheckpointID {
		cfg.CheckpointID = ""
	}
	versions := map[string]string{}
	for ch, v := range base {
		versions[ch] = v
	}
	values, newVersions := map[string]any{}, map[string]string{}
	for _, ch := range modelChannels {
		switch r := m.rng.IntN(10); {
		case r < 4 || base[ch] == "" && r < 7:
			v := m.nextVersion()
			versions[ch], newVersions[ch] = v, v
			if m.rng.IntN(10) > 0 {
				values[ch] = m.value()
			}
		case r < 5:
			values[ch] = "ignored: not a new version"
		}
	}
	if len(base) == 0 {
		// A parent the reference does not hold: its versions are unknown, every
		// channel is new.
		for ch := range versions {
			if newVersions[ch] == "" {
				delete(versions, ch)
			}
		}
	}
	cp := checkpoint.Checkpoint{V: 4, ID: id, TS: fmt.Sprintf("2026-11-25T00:00:%02dZ", len(m.log)%60),
		ChannelValues: values, ChannelVersions: versions,
		VersionsSeen: map[string]map[string]string{"node": {"a": versions["a"]}}}
	if m.rng.IntN(10) == 0 {
		cp.V = 1
	}
	md := checkpoint.Metadata{"source": m.pick([]string{"loop", "input", "update"}), "step": m.rng.IntN(5) - 1,
		"parents": map[string]any{}}
	if m.rng.IntN(5) > 0 {
		md["run_id"] = m.pick(modelRuns)
	}
	m.logf("Put via %s: thread %q ns %q parent %q id %q new %v V %d md %v", m.names[i], th, ns, cfg.CheckpointID, id,
		slices.Sorted(mapKeys(newVersions)), cp.V, md)
	if old, err := m.ref.GetTuple(m.ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: id}); err == nil &&
		parentID(old) != cfg.CheckpointID {
		// memsaver replaces the parent, as LangGraph's in-memory saver does;
		// redissaver refuses a re-put that changes it (REPARENT), so that a
		// parent chain never changes under a reader, nor forms a cycle.
		_, gerr := s.Put(m.ctx, cfg, cp, md, newVersions)
		m.sameErr("Put changing the parent", checkpoint.ErrInvalidCheckpoint, gerr)
		return
	}
	want, werr := m.ref.Put(m.ctx, cfg, cp, md, newVersions)
	got, gerr := s.Put(m.ctx, cfg, cp, md, newVersions)
	if m.sameErr("Put", werr, gerr) {
		if got != want {
			m.fail("Put: config %+v, the reference's %+v", got, want)
		}
		if !slices.Contains(m.seen[addr(th, ns)], id) {
			m.seen[addr(th, ns)] = append(m.seen[addr(th, ns)], id)
		}
	}
}

// fork puts a copy of a checkpoint beside it, as LangGraph's fork
// (update_state as "__copy__") does: a new ID, the same channel versions,
// the copied checkpoint's parent as its parent, and no new versions.
func (m *saverModel) fork() {
	i, s := m.saver()
	th, ns := m.pick(modelThreads), m.pick(modelNS)
	src, err := m.ref.GetTuple(m.ctx, checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: m.knownID(th, ns)})
	if err != nil {
		return
	}
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: parentID(src)}
	cp := src.Checkpoint
	if m.next >= len(m.ids) {
		return
	}
	cp.ID = m.ids[m.next]
	m.next++
	md := checkpoint.Metadata{"source": "fork", "step": m.rng.IntN(5) - 1, "parents": map[string]any{}}
	m.logf("fork via %s: thread %q ns %q copy of %q as %q, parent %q", m.names[i], th, ns, src.Checkpoint.ID, cp.ID,
		cfg.CheckpointID)
	want, werr := m.ref.Put(m.ctx, cfg, cp, md, map[string]string{})
	got, gerr := s.Put(m.ctx, cfg, cp, md, map[string]string{})
	if m.sameErr("fork", werr, gerr) {
		if got != want {
			m.fail("fork: config %+v, the reference's %+v", got, want)
		}
		m.seen[addr(th, ns)] = append(m.seen[addr(th, ns)], cp.ID)
	}
}

func parentID(tp *checkpoint.Tuple) string {
	if tp.ParentConfig == nil {
		return ""
	}
	return tp.ParentConfig.CheckpointID
}

func mapKeys[V any](mp map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range mp {
			if !yield(k) {
				return
			}
		}
	}
}

func (m *saverModel) putWrites() {
	i, s := m.saver()
	th, ns := m.pick(modelThreads), m.pick(modelNS)
	id := m.knownID(th, ns)
	if id == "" || m.rng.IntN(10) == 0 {
		id = m.pick(m.ids)
	}
	var writes []checkpoint.Write
	for range 1 + m.rng.IntN(3) {
		ch := m.pick(modelChannels)
		if m.rng.IntN(5) == 0 {
			ch = m.pick(modelSpecial)
		}
		writes = append(writes, checkpoint.Write{Channel: ch, Value: m.value()})
	}
	task := m.pick(modelTasks)
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns, CheckpointID: id}
	chans := make([]string, len(writes))
	for j, w := range writes {
		chans[j] = w.Channel
	}
	m.logf("PutWrites via %s: thread %q ns %q id %q task %q channels %v", m.names[i], th, ns, id, task, chans)
	werr := m.ref.PutWrites(m.ctx, cfg, writes, task, "path")
	gerr := s.PutWrites(m.ctx, cfg, writes, task, "path")
	m.sameErr("PutWrites", werr, gerr)
}

func (m *saverModel) getTuple() {
	i, s := m.saver()
	th, ns := m.pick(modelThreads), m.pick(modelNS)
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
	switch r := m.rng.IntN(10); {
	case r < 5:
	case r < 9:
		cfg.CheckpointID = m.knownID(th, ns)
	default:
		cfg.CheckpointID = m.pick(m.ids)
	}
	m.logf("GetTuple via %s: thread %q ns %q id %q", m.names[i], th, ns, cfg.CheckpointID)
	want, werr := m.ref.GetTuple(m.ctx, cfg)
	got, gerr := s.GetTuple(m.ctx, cfg)
	if m.sameErr("GetTuple", werr, gerr) {
		m.sameTuple("GetTuple", want, got)
	}
}

func (m *saverModel) list() {
	i, s := m.saver()
	q := checkpoint.ListQuery{}
	th := ""
	if m.rng.IntN(5) > 0 {
		th = m.pick(modelThreads)
		q.ThreadID = th
	}
	if m.rng.IntN(10) < 7 {
		q.CheckpointNS = checkpoint.NS(m.pick(modelNS))
	}
	if th != "" && m.rng.IntN(5) == 0 {
		ns := ""
		if q.CheckpointNS != nil {
			ns = *q.CheckpointNS
		}
		if m.rng.IntN(2) == 0 {
			q.Before = m.knownID(th, ns)
		} else {
			q.CheckpointID = m.knownID(th, ns)
		}
	} else if m.rng.IntN(8) == 0 {
		q.Before = m.pick(m.ids)
	}
	switch m.rng.IntN(8) {
	case 0:
		q.Filter = checkpoint.Metadata{"source": m.pick([]string{"loop", "input", "update"})}
	case 1:
		q.Filter = checkpoint.Metadata{"run_id": m.pick(modelRuns), "step": m.rng.IntN(5) - 1}
	case 2:
		q.Filter = checkpoint.Metadata{"run_id": nil}
	}
	if m.rng.IntN(3) == 0 {
		q.Limit = 1 + m.rng.IntN(5)
	}
	ns := "<all>"
	if q.CheckpointNS != nil {
		ns = strconv.Quote(*q.CheckpointNS)
	}
	m.logf("List via %s: thread %q ns %s id %q before %q filter %v limit %d", m.names[i], q.ThreadID, ns,
		q.CheckpointID, q.Before, q.Filter, q.Limit)
	want, werr := collectList(m.ref.List(m.ctx, q))
	got, gerr := collectList(s.List(m.ctx, q))
	if !m.sameErr("List", werr, gerr) {
		return
	}
	if len(got) != len(want) {
		m.fail("List: %d tuples %v, the reference's %d %v", len(got), tupleIDs(got), len(want), tupleIDs(want))
	}
	for j := range want {
		m.sameTuple(fmt.Sprintf("List[%d]", j), want[j], got[j])
	}
}

func collectList(seq func(func(*checkpoint.Tuple, error) bool)) ([]*checkpoint.Tuple, error) {
	var out []*checkpoint.Tuple
	for tp, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, tp)
	}
	return out, nil
}

func tupleIDs(ts []*checkpoint.Tuple) []string {
	out := make([]string, len(ts))
	for i, tp := range ts {
		out[i] = tp.Config.ThreadID + "/" + tp.Config.CheckpointNS + "/" + tp.Checkpoint.ID
	}
	return out
}

func (m *saverModel) sameTuple(op string, want, got *checkpoint.Tuple) {
	m.t.Helper()
	if !reflect.DeepEqual(want, got) {
		m.fail("%s: tuple\n%s\nthe reference's\n%s", op, showTuple(got), showTuple(want))
	}
}

func showTuple(tp *checkpoint.Tuple) string {
	if tp == nil {
		return "<nil>"
	}
	short := func(v any) string {
		s := fmt.Sprintf("%#v", v)
		if len(s) > 120 {
			s = s[:120] + fmt.Sprintf("…(%d)", len(s))
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  config %+v parent %+v\n  V %d id %q ts %q\n  versions %v\n  seen %v\n  metadata %v\n",
		tp.Config, tp.ParentConfig, tp.Checkpoint.V, tp.Checkpoint.ID, tp.Checkpoint.TS,
		tp.Checkpoint.ChannelVersions, tp.Checkpoint.VersionsSeen, tp.Metadata)
	for _, ch := range slices.Sorted(mapKeys(tp.Checkpoint.ChannelValues)) {
		fmt.Fprintf(&b, "  value %q: %s\n", ch, short(tp.Checkpoint.ChannelValues[ch]))
	}
	for _, w := range tp.PendingWrites {
		fmt.Fprintf(&b, "  write %q %q: %s\n", w.TaskID, w.Channel, short(w.Value))
	}
	return b.String()
}

func (m *saverModel) delta() {
	i, s := m.saver()
	th, ns := m.pick(modelThreads), m.pick(modelNS)
	cfg := checkpoint.Config{ThreadID: th, CheckpointNS: ns}
	if m.rng.IntN(2) == 0 {
		cfg.CheckpointID = m.knownID(th, ns)
	}
	var chans []string
	for range 1 + m.rng.IntN(3) {
		chans = append(chans, m.pick(modelChannels))
	}
	m.logf("DeltaChannelHistory via %s: thread %q ns %q id %q channels %v", m.names[i], th, ns, cfg.CheckpointID, chans)
	want, werr := m.ref.DeltaChannelHistory(m.ctx, cfg, chans)
	got, gerr := s.DeltaChannelHistory(m.ctx, cfg, chans)
	if m.sameErr("DeltaChannelHistory", werr, gerr) && !reflect.DeepEqual(want, got) {
		m.fail("DeltaChannelHistory: %#v, the reference's %#v", got, want)
	}
}

func (m *saverModel) deleteThread() {
	i, s := m.saver()
	th := m.pick(modelThreads)
	m.logf("DeleteThread via %s: %q", m.names[i], th)
	m.sameErr("DeleteThread", m.ref.DeleteThread(m.ctx, th), s.DeleteThread(m.ctx, th))
}

func (m *saverModel) deleteRuns() {
	i, s := m.saver()
	runs := []string{m.pick(modelRuns)}
	if m.rng.IntN(3) == 0 {
		runs = append(runs, m.pick(modelRuns))
	}
	m.logf("DeleteForRuns via %s: %v", m.names[i], runs)
	m.sameErr("DeleteForRuns", m.ref.DeleteForRuns(m.ctx, runs), s.DeleteForRuns(m.ctx, runs))
}

func (m *saverModel) copyThread() {
	i, s := m.saver()
	src, dst := m.pick(modelThreads), m.pick(modelThreads)
	m.logf("CopyThread via %s: %q -> %q", m.names[i], src, dst)
	if m.sameErr("CopyThread", m.ref.CopyThread(m.ctx, src, dst), s.CopyThread(m.ctx, src, dst)) && src != dst {
		for _, ns := range modelNS {
			for _, id := range m.seen[addr(src, ns)] {
				if !slices.Contains(m.seen[addr(dst, ns)], id) {
					m.seen[addr(dst, ns)] = append(m.seen[addr(dst, ns)], id)
				}
			}
		}
	}
}

func (m *saverModel) prune() {
	i, s := m.saver()
	threads := []string{m.pick(modelThreads)}
	if m.rng.IntN(3) == 0 {
		threads = append(threads, m.pick(modelThreads))
	}
	strategy := checkpoint.PruneKeepLatest
	if m.rng.IntN(4) == 0 {
		strategy = checkpoint.PruneDelete
	}
	m.logf("Prune via %s: %v %s", m.names[i], threads, strategy)
	m.sameErr("Prune", m.ref.Prune(m.ctx, threads, strategy), s.Prune(m.ctx, threads, strategy))
}
