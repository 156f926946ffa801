package checkpoint

import (
	"maps"
	"reflect"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	prev := Checkpoint{
		V:               1,
		ID:              NewID(),
		TS:              "old",
		ChannelValues:   map[string]any{"a": 1, "b": "x"},
		ChannelVersions: map[string]string{"a": "000000000001.00000000", "b": "000000000007.00000000"},
		VersionsSeen:    map[string]map[string]string{"node": {"a": "000000000001.00000000"}},
		UpdatedChannels: []string{"a", "b"},
	}
	fixed := func(current string) string { return current + "+" }
	tests := []struct {
		name         string
		prev         Checkpoint
		updates      map[string]any
		next         func(string) string
		wantValues   map[string]any
		wantVersions map[string]string
		wantUpdated  []string
	}{
		{
			name:         "one changed channel",
			prev:         prev,
			updates:      map[string]any{"b": "y"},
			next:         fixed,
			wantValues:   map[string]any{"a": 1, "b": "y"},
			wantVersions: map[string]string{"a": "000000000001.00000000", "b": "000000000007.00000000+"},
			wantUpdated:  []string{"b"},
		},
		{
			name:         "a new channel starts from the empty version",
			prev:         prev,
			updates:      map[string]any{"c": nil, "a": 2},
			next:         fixed,
			wantValues:   map[string]any{"a": 2, "b": "x", "c": nil},
			wantVersions: map[string]string{"a": "000000000001.00000000+", "b": "000000000007.00000000", "c": "+"},
			wantUpdated:  []string{"a", "c"},
		},
		{
			name:         "no update",
			prev:         prev,
			next:         fixed,
			wantValues:   map[string]any{"a": 1, "b": "x"},
			wantVersions: maps.Clone(prev.ChannelVersions),
			wantUpdated:  []string{},
		},
		{
			name:         "from Empty",
			prev:         Empty(),
			updates:      map[string]any{"a": 1},
			next:         fixed,
			wantValues:   map[string]any{"a": 1},
			wantVersions: map[string]string{"a": "+"},
			wantUpdated:  []string{"a"},
		},
		{
			name:         "from the zero Checkpoint",
			updates:      map[string]any{"a": 1},
			next:         fixed,
			wantValues:   map[string]any{"a": 1},
			wantVersions: map[string]string{"a": "+"},
			wantUpdated:  []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.prev)
			start := time.Now().UTC()
			next, nv := Next(tt.prev, tt.updates, tt.next)
			if !reflect.DeepEqual(tt.prev, before) {
				t.Errorf("Next modified prev: %+v, was %+v", tt.prev, before)
			}
			if next.V != LatestVersion || next.ID <= tt.prev.ID || next.ID == "" {
				t.Errorf("V %d, ID %q after %q", next.V, next.ID, tt.prev.ID)
			}
			if ts, err := time.Parse(time.RFC3339Nano, next.TS); err != nil || ts.Before(start.Truncate(time.Second)) {
				t.Errorf("TS %q: %v", next.TS, err)
			}
			if !reflect.DeepEqual(next.ChannelValues, tt.wantValues) {
				t.Errorf("ChannelValues = %v, want %v", next.ChannelValues, tt.wantValues)
			}
			if !reflect.DeepEqual(next.ChannelVersions, tt.wantVersions) {
				t.Errorf("ChannelVersions = %v, want %v", next.ChannelVersions, tt.wantVersions)
			}
			if !reflect.DeepEqual(next.UpdatedChannels, tt.wantUpdated) {
				t.Errorf("UpdatedChannels = %v, want %v", next.UpdatedChannels, tt.wantUpdated)
			}
			wantNV := map[string]string{}
			for ch := range tt.updates {
				wantNV[ch] = tt.wantVersions[ch]
			}
			if !reflect.DeepEqual(nv, wantNV) {
				t.Errorf("newVersions = %v, want %v", nv, wantNV)
			}
			if len(tt.prev.VersionsSeen) > 0 {
				if !reflect.DeepEqual(next.VersionsSeen, tt.prev.VersionsSeen) {
					t.Errorf("VersionsSeen = %v, want prev's %v", next.VersionsSeen, tt.prev.VersionsSeen)
				}
				next.VersionsSeen["node"]["a"] = "changed"
				if tt.prev.VersionsSeen["node"]["a"] == "changed" {
					t.Error("VersionsSeen shares its inner maps with prev")
				}
			}
		})
	}
}

func TestNextDefaultsToNextVersion(t *testing.T) {
	next, nv := Next(Empty(), map[string]any{"a": 1}, nil)
	if !isOwnVersion(nv["a"]) || next.ChannelVersions["a"] != nv["a"] {
		t.Fatalf("version %q, want one of NextVersion's", nv["a"])
	}
	next2, nv2 := Next(next, map[string]any{"a": 2}, nil)
	if nv2["a"] <= nv["a"] || next2.ChannelVersions["a"] != nv2["a"] {
		t.Fatalf("second version %q is not after %q", nv2["a"], nv["a"])
	}
}

func TestParentAndRoot(t *testing.T) {
	c := Config{ThreadID: "t", CheckpointNS: "ns", CheckpointID: "id"}
	if Parent(c) != c {
		t.Errorf("Parent(%+v) = %+v", c, Parent(c))
	}
	if got := Root("t", "ns"); got != (Config{ThreadID: "t", CheckpointNS: "ns"}) {
		t.Errorf("Root = %+v", got)
	}
}

func deepCopy(c Checkpoint) Checkpoint {
	c.ChannelValues = maps.Clone(c.ChannelValues)
	c.ChannelVersions = maps.Clone(c.ChannelVersions)
	if c.VersionsSeen != nil {
		vs := make(map[string]map[string]string, len(c.VersionsSeen))
		for k, v := range c.VersionsSeen {
			vs[k] = maps.Clone(v)
		}
		c.VersionsSeen = vs
	}
	c.UpdatedChannels = append([]string(nil), c.UpdatedChannels...)
	return c
}
