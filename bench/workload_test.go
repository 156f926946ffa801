package main

import (
	"testing"
)

// TestAgentTable pins the workload of issue 6: 10 channels, 2 changing per
// step, about 15 KB of state by step 50, 2 tasks × 3 writes.
func TestAgentTable(t *testing.T) {
	tab := agentTable(100)
	if len(tab) != 100 {
		t.Fatalf("%d steps", len(tab))
	}
	if got := tab.stateBytes(50); got < 13_000 || got > 17_000 {
		t.Errorf("state at step 50 is %d bytes, want about 15 KB", got)
	}
	for s, st := range tab {
		if len(st.values) != 10 || len(st.versions) != 10 || len(st.all) != 10 {
			t.Fatalf("step %d: %d values, %d versions", s, len(st.values), len(st.versions))
		}
		if len(st.changed) != 2 {
			t.Fatalf("step %d changes %d channels, want 2", s, len(st.changed))
		}
		if _, ok := st.changed["messages"]; !ok {
			t.Fatalf("step %d does not change messages", s)
		}
		if len(st.writes) != 2 || len(st.writes[0]) != 3 || len(st.writes[1]) != 3 {
			t.Fatalf("step %d writes %v", s, st.writes)
		}
		if s > 0 {
			prev := tab[s-1]
			for ch, v := range st.changed {
				if v <= prev.versions[ch] {
					t.Errorf("step %d: version of %s %q does not follow %q", s, ch, v, prev.versions[ch])
				}
			}
			for ch, v := range st.versions {
				if _, changed := st.changed[ch]; !changed && v != prev.versions[ch] {
					t.Errorf("step %d: unchanged channel %s moved from %q to %q", s, ch, prev.versions[ch], v)
				}
			}
		}
		if n := len(st.values["messages"].([]any)); n != s+1 {
			t.Errorf("step %d holds %d messages", s, n)
		}
	}
	changed, writes := tab.avgBytes()
	if changed < 10_000 || writes < 300 {
		t.Errorf("average changed %v, writes %v bytes per step", changed, writes)
	}
}

func TestFixedTable(t *testing.T) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		tab := fixedTable(3, size)
		got := tab.stateBytes(1)
		if got < size*8/10 || got > size*13/10 {
			t.Errorf("state of %d bytes asked, %d built", size, got)
		}
		if tab[0].changedBytes == 0 || len(tab[2].changed) != 2 {
			t.Errorf("size %d: step data %+v", size, tab[2].changed)
		}
	}
}

// TestTextMatchesNode pins text() and the rotation of changed channels,
// which bench/peers/js/workload.mjs repeats (node printed these same values
// for text(3, 40) and agentTable(51)[50].changed), so that both sides build
// the same workload.
func TestTextMatchesNode(t *testing.T) {
	if got := text(3, 40); got != "with answering the and question calls it" {
		t.Errorf("text(3, 40) = %q", got)
	}
	ch := agentTable(51)[50].changed
	if len(ch) != 2 || ch["messages"] != "000000000051.5eed5eed" || ch["summary"] != "000000000007.5eed5eed" {
		t.Errorf("step 50 changes %v", ch)
	}
	if got := version(7); got != "000000000007.5eed5eed" {
		t.Errorf("version(7) = %q", got)
	}
}
