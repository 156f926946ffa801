package main

import (
	"fmt"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

// The agent workload of issue 6. A thread runs super-steps; at each step its
// checkpoint holds 10 channels, of which 2 change: "messages", a list that
// grows by one message (about 250 bytes serialized) per step, so that the
// state is about 15 KB by step 50, and one of the 9 others (about 280 bytes
// each) in turn. Two tasks then store 3 pending writes each. The Node peers
// (bench/peers/js/workload.mjs) build the same values.

// channels are the 10 channels; messages is channels[0].
var channels = [10]string{"messages", "plan", "scratchpad", "tool_results", "user_profile",
	"retrieval", "summary", "route", "config", "step_info"}

const (
	// messageText is the length of a message's content.
	messageText = 200
	// otherText is the length of the data of the 9 other channels.
	otherText = 256
	// versionSuffix completes every version; savers treat versions as
	// opaque, and a fixed suffix keeps the tables deterministic.
	versionSuffix = ".5eed5eed"
)

// text returns n bytes of deterministic words, different for each seed.
func text(seed, n int) string {
	words := []string{"the", "agent", "calls", "a", "tool", "with", "arguments", "and", "reads",
		"its", "result", "before", "answering", "user", "question", "about", "weather", "in", "paris"}
	var b strings.Builder
	for i := seed; b.Len() < n; i++ {
		b.WriteString(words[(i*7+seed)%len(words)])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// message returns message number j of a thread.
func message(j int) map[string]any {
	typ := "human"
	if j%2 == 1 {
		typ = "ai"
	}
	return map[string]any{"type": typ, "id": fmt.Sprintf("msg-%06d", j), "content": text(j, messageText)}
}

// otherValue returns revision rev of channel k (1..9) with size bytes of data.
func otherValue(k, rev, size int) map[string]any {
	return map[string]any{"channel": channels[k], "rev": int64(rev), "data": text(k*1000+rev, size)}
}

// version returns version number n (1-based) in NextVersion's format.
func version(n int) string { return fmt.Sprintf("%012d%s", n, versionSuffix) }

// step is everything one super-step of a thread puts, prepared in advance
// so that measured operations build almost nothing (values are shared,
// read-only, between goroutines).
type step struct {
	values   map[string]any
	versions map[string]string
	// changed holds the new versions of the 2 channels that changed; all
	// those of the 10 channels, for the first step of a thread.
	changed, all map[string]string
	seen         map[string]map[string]string
	writes       [2][]checkpoint.Write
	// changedBytes is the serialized size of the 2 changed values;
	// writeBytes that of the 6 pending writes.
	changedBytes, writeBytes int
}

// table is the steps of a thread, from its first on.
type table []step

// agentTable returns steps 0..n-1 of the agent workload: messages grows by
// one message per step.
func agentTable(n int) table {
	base := make([]any, n)
	for j := range base {
		base[j] = message(j)
	}
	return buildTable(n, func(s int) []any { return base[: s+1 : s+1] }, otherText)
}

// fixedTable returns n steps whose state keeps about size bytes: a message
// list of 90% of it (it still changes every step: its last message is new)
// and 9 channels sharing the rest.
func fixedTable(n, size int) table {
	count := max(1, size*9/10/250)
	other := max(8, size/10/9-24)
	base := make([]any, count)
	for j := range base {
		base[j] = message(j)
	}
	return buildTable(n, func(s int) []any {
		msgs := append([]any(nil), base...)
		msgs[count-1] = message(count - 1 + s)
		return msgs
	}, other)
}

func buildTable(n int, messages func(s int) []any, otherSize int) table {
	ser := checkpoint.MsgpackSerializer{}
	size := func(v any) int {
		_, b, err := ser.DumpsTyped(v)
		if err != nil {
			panic(err) // the workload's own values always serialize
		}
		return len(b)
	}
	t := make(table, n)
	rev := make([]int, len(channels)) // the revision of each channel
	for s := range n {
		changedK := 1 + s%(len(channels)-1)
		rev[0]++
		rev[changedK]++
		if s == 0 {
			for k := range rev {
				rev[k] = 1
			}
		}
		st := step{
			values:   make(map[string]any, len(channels)),
			versions: make(map[string]string, len(channels)),
			changed:  map[string]string{},
			all:      make(map[string]string, len(channels)),
		}
		for k, ch := range channels {
			if k == 0 {
				st.values[ch] = messages(s)
			} else {
				st.values[ch] = otherValue(k, rev[k], otherSize)
			}
			st.versions[ch] = version(rev[k])
			st.all[ch] = st.versions[ch]
		}
		st.changed[channels[0]] = st.versions[channels[0]]
		st.changed[channels[changedK]] = st.versions[channels[changedK]]
		st.changedBytes = size(st.values[channels[0]]) + size(st.values[channels[changedK]])
		st.seen = map[string]map[string]string{
			"agent": {channels[0]: st.versions[channels[0]], channels[7]: st.versions[channels[7]]},
			"tools": {channels[3]: st.versions[channels[3]]},
		}
		st.writes = [2][]checkpoint.Write{
			{
				{Channel: channels[0], Value: message(s + 1)},
				{Channel: channels[7], Value: "tools"},
				{Channel: channels[1], Value: map[string]any{"next": "tools", "step": int64(s)}},
			},
			{
				{Channel: channels[3], Value: map[string]any{"tool": "search", "result": text(s, 160)}},
				{Channel: channels[2], Value: text(s+7, 100)},
				{Channel: channels[9], Value: int64(s)},
			},
		}
		for _, task := range st.writes {
			for _, w := range task {
				st.writeBytes += size(w.Value)
			}
		}
		t[s] = st
	}
	return t
}

// avgBytes returns the mean changed-value and write bytes per step.
func (t table) avgBytes() (changed, writes float64) {
	for _, s := range t {
		changed += float64(s.changedBytes)
		writes += float64(s.writeBytes)
	}
	return changed / float64(len(t)), writes / float64(len(t))
}

// stateBytes returns the serialized size of every channel at step s.
func (t table) stateBytes(s int) int {
	ser := checkpoint.MsgpackSerializer{}
	total := 0
	for _, v := range t[s].values {
		_, b, _ := ser.DumpsTyped(v)
		total += len(b)
	}
	return total
}

// taskIDs name the two tasks of a step.
var taskIDs = [2]string{"task-agent", "task-tools"}
