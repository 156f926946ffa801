package checkpointtest

import (
	"slices"
	"strconv"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/testctx"
)

// deltaCases is the DELTA_CHANNEL_HISTORY group (contract §4.9,
// P-DCH-01..08), run when the saver implements checkpoint.DeltaHistorian.
var deltaCases = []testCase[checkpoint.DeltaHistorian]{
	{"history_returns_writes_oldest_first", historyReturnsWritesOldestFirst},
	{"history_seed_is_nearest_snapshot", historySeedIsNearestSnapshot},
	{"history_excludes_target_pending_writes", historyExcludesTargetPendingWrites},
	{"history_multi_channel", historyMultiChannel},
	{"history_empty_channels_returns_empty", historyEmptyChannelsReturnsEmpty},
	{"history_walk_to_root_no_seed", historyWalkToRootNoSeed},
	{"history_migration_plain_value_as_seed", historyMigrationPlainValueAsSeed},
	{"history_seed_ancestor_own_writes_are_replayed", historySeedAncestorOwnWritesAreReplayed},
}

// deltaCP is the checkpoint of the delta fixtures: V 1, ts "", no versions
// seen, updated channels unknown.
func deltaCP(values map[string]any, vers map[string]string) checkpoint.Checkpoint {
	if values == nil {
		values = map[string]any{}
	}
	if vers == nil {
		vers = map[string]string{}
	}
	return checkpoint.Checkpoint{
		V:               1,
		ID:              checkpoint.NewID(),
		TS:              "",
		ChannelValues:   values,
		ChannelVersions: vers,
		VersionsSeen:    map[string]map[string]string{},
	}
}

// buildDeltaChain is build_delta_chain (contract §3.2) with the identity
// write_value_fn: total chained steps on (tid, ns); a step in snapshots
// holds DeltaSnapshot{step} for channel at version step+1, every other step
// gets one write of the value step. It returns the stored configs, oldest
// first.
func buildDeltaChain(t *testing.T, s checkpoint.Saver, tid, ns, channel string, snapshots []int, total int) []checkpoint.Config {
	t.Helper()
	out := make([]checkpoint.Config, 0, total)
	c := cfg(tid, ns)
	for step := range total {
		var values map[string]any
		var vers map[string]string
		snap := slices.Contains(snapshots, step)
		if snap {
			values = map[string]any{channel: checkpoint.DeltaSnapshot{Value: step}}
			vers = map[string]string{channel: strconv.Itoa(step + 1)}
		}
		stored := put(t, s, c, deltaCP(values, vers), md("loop", step), vers)
		if !snap {
			putWrites(t, s, stored, newUUID(), w(channel, step))
		}
		out = append(out, stored)
		c = childOf(stored)
	}
	return out
}

// manualStep is one step of the manual chains of P-DCH-04/07/08: its channel
// values and versions (also the new versions) and the writes put after it.
type manualStep struct {
	values map[string]any
	vers   map[string]string
	writes []checkpoint.Write
}

// buildManualChain puts the steps as a chain on (tid, ""), with MD(step=i),
// and returns the stored configs, oldest first.
func buildManualChain(t *testing.T, s checkpoint.Saver, tid string, steps []manualStep) []checkpoint.Config {
	t.Helper()
	out := make([]checkpoint.Config, 0, len(steps))
	c := cfg(tid, "")
	for i, st := range steps {
		stored := put(t, s, c, deltaCP(st.values, st.vers), md("loop", i), st.vers)
		if len(st.writes) > 0 {
			putWrites(t, s, stored, newUUID(), st.writes...)
		}
		out = append(out, stored)
		c = childOf(stored)
	}
	return out
}

// history is H(head, channels), fatal on error.
func history(t *testing.T, h checkpoint.DeltaHistorian, head checkpoint.Config, channels ...string) map[string]checkpoint.DeltaHistory {
	t.Helper()
	if channels == nil {
		channels = []string{}
	}
	r, err := h.DeltaChannelHistory(testctx.Context(t), head, channels)
	if err != nil {
		t.Fatalf("DeltaChannelHistory(%+v, %q): %v", head, channels, err)
	}
	return r
}

// entry returns r[ch], failing when the channel has no entry.
func entry(t *testing.T, r map[string]checkpoint.DeltaHistory, ch string) checkpoint.DeltaHistory {
	t.Helper()
	e, ok := r[ch]
	if !ok {
		t.Fatalf("history has no entry for %q (entries: %v)", ch, r)
	}
	return e
}

// wantVals fails unless vals(e) equals want.
func wantVals(t *testing.T, ch string, e checkpoint.DeltaHistory, want ...any) {
	t.Helper()
	wantValue(t, "history writes of "+ch, writeValues(e), want)
}

// P-DCH-01 (the seed, Snap(0), is not asserted).
func historyReturnsWritesOldestFirst(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	c := buildDeltaChain(t, s, newUUID(), "", "ch", []int{0}, 5)
	wantVals(t, "ch", entry(t, history(t, h, c[4], "ch"), "ch"), 1, 2, 3)
}

// P-DCH-02
func historySeedIsNearestSnapshot(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	c := buildDeltaChain(t, s, newUUID(), "", "ch", []int{0, 3}, 6)
	e := entry(t, history(t, h, c[5], "ch"), "ch")
	if !e.HasSeed {
		t.Fatal("no seed, want Snap(3)")
	}
	wantValue(t, "unwrapped seed", unwrap(e.Seed), 3)
	wantVals(t, "ch", e, 4)
}

// P-DCH-03 (only the exclusion is asserted; the reference gives [1]).
func historyExcludesTargetPendingWrites(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	c := buildDeltaChain(t, s, newUUID(), "", "ch", []int{0}, 3)
	putWrites(t, s, c[2], newUUID(), w("ch", "extra"))
	for _, v := range writeValues(entry(t, history(t, h, c[2], "ch"), "ch")) {
		if equal(v, "extra") {
			t.Fatal(`history includes the target's own write "extra"`)
		}
	}
}

// P-DCH-04: each channel stops at its own seed, whose own writes count.
func historyMultiChannel(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	steps := make([]manualStep, 5)
	for i := range steps {
		steps[i].writes = []checkpoint.Write{w("a", i), w("b", i)}
	}
	steps[1].values, steps[1].vers = map[string]any{"a": checkpoint.DeltaSnapshot{Value: "snap_a"}}, versions("a", "2")
	steps[3].values, steps[3].vers = map[string]any{"b": checkpoint.DeltaSnapshot{Value: "snap_b"}}, versions("b", "4")
	c := buildManualChain(t, s, newUUID(), steps)
	r := history(t, h, c[4], "a", "b")
	wantVals(t, "a", entry(t, r, "a"), 1, 2, 3)
	wantVals(t, "b", entry(t, r, "b"), 3)
}

// P-DCH-05
func historyEmptyChannelsReturnsEmpty(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	c := buildDeltaChain(t, s, newUUID(), "", "ch", []int{0}, 3)
	r := history(t, h, c[2])
	if r == nil || len(r) != 0 {
		t.Fatalf("history of no channels = %#v, want an empty map", r)
	}
}

// P-DCH-06: no seed on the way to the root means HasSeed false (the Python
// key is absent). The writes ([0 1 2] by the reference) are not asserted.
func historyWalkToRootNoSeed(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	c := buildDeltaChain(t, s, newUUID(), "", "ch", nil, 4)
	e := entry(t, history(t, h, c[3], "ch"), "ch")
	if e.HasSeed {
		t.Fatalf("seed = %#v, want none", e.Seed)
	}
}

// P-DCH-07: a plain (non-snapshot) value seeds the channel and comes back
// plain.
func historyMigrationPlainValueAsSeed(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	steps := make([]manualStep, 4)
	for i := range steps {
		if i == 1 {
			steps[i].values, steps[i].vers = map[string]any{"ch": []any{10, 20, 30}}, versions("ch", "2")
			continue
		}
		steps[i].writes = []checkpoint.Write{w("ch", i)}
	}
	c := buildManualChain(t, s, newUUID(), steps)
	e := entry(t, history(t, h, c[3], "ch"), "ch")
	if !e.HasSeed {
		t.Fatal("no seed, want the plain value [10 20 30]")
	}
	if _, snap := e.Seed.(checkpoint.DeltaSnapshot); snap {
		t.Fatalf("seed = %#v, want the plain value, not a snapshot", e.Seed)
	}
	wantValue(t, "seed", e.Seed, []any{10, 20, 30})
	wantVals(t, "ch", e, 2)
}

// P-DCH-08: the seed ancestor's own writes are replayed, older ones are not.
func historySeedAncestorOwnWritesAreReplayed(t *testing.T, s checkpoint.Saver, h checkpoint.DeltaHistorian) {
	labels := []string{"older-than-seed", "at-seed", "after-seed", "pending-at-head"}
	steps := make([]manualStep, 4)
	for i := range steps {
		steps[i].writes = []checkpoint.Write{w("ch", labels[i])}
	}
	steps[0].values, steps[0].vers = map[string]any{"ch": []any{10}}, versions("ch", "1")
	steps[1].values, steps[1].vers = map[string]any{"ch": []any{10, 20}}, versions("ch", "2")
	c := buildManualChain(t, s, newUUID(), steps)
	e := entry(t, history(t, h, c[3], "ch"), "ch")
	if !e.HasSeed {
		t.Fatal("no seed, want [10 20]")
	}
	wantValue(t, "seed", e.Seed, []any{10, 20})
	wantVals(t, "ch", e, "at-seed", "after-seed")
}
