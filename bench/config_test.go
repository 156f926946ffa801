package main

import (
	"slices"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]string{"-history", "100000,10,1_000", "-state-sizes", "1MB,1KB,512", "-concurrency", "4,1,4"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.history, []int{10, 1000, 100000}) || !slices.Equal(c.stateSizes, []int{512, 1024, 1 << 20}) || !slices.Equal(c.concurrency, []int{1, 4}) {
		t.Errorf("lists: %v %v %v", c.history, c.stateSizes, c.concurrency)
	}
	if c.threads != 20 || c.steps != 100 || c.budget != time.Second || c.rounds != 20 || c.out != "bench/results" {
		t.Errorf("defaults: %+v", c)
	}
	q, err := parseConfig([]string{"-quick", "-threads", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if q.threads != 3 || q.ops != 300 || q.out == "bench/results" || slices.Max(q.history) != 1000 {
		t.Errorf("quick: %+v (an explicit flag wins over -quick)", q)
	}
	if !slices.Equal(c.jsConc, []int{1, 64}) || !slices.Equal(c.jsDurability, []string{"sync", "async", "exit"}) || c.jsSteps != 1000 || c.jsTime != 10*time.Second {
		t.Errorf("super-step on LangGraph.js, defaults: %v %v %d %v", c.jsConc, c.jsDurability, c.jsSteps, c.jsTime)
	}
	if !slices.Equal(q.jsConc, []int{1}) || q.jsSteps != 100 || q.jsTime != 2*time.Second || q.jsTimeout != 2*time.Minute {
		t.Errorf("super-step on LangGraph.js, -quick: %v %d %v %v", q.jsConc, q.jsSteps, q.jsTime, q.jsTimeout)
	}
	if d, err := parseConfig([]string{"-superstep-js-durability", "async, sync"}); err != nil || !slices.Equal(d.jsDurability, []string{"async", "sync"}) {
		t.Errorf("-superstep-js-durability async, sync: %v, %v", d.jsDurability, err)
	}
	for _, bad := range [][]string{{"-concurrency", "4,16"}, {"-steps", "5"}, {"-history", "x"}, {"-state-sizes", "1GB"}, {"-concurrency", "0"},
		{"-superstep-js-durability", "sync,later"}, {"-superstep-js-durability", ","}, {"-superstep-js-steps", "10"}, {"-superstep-js-concurrency", "0"}} {
		if _, err := parseConfig(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{512: "512B", 1024: "1KB", 16 << 10: "16KB", 1 << 20: "1MB", 1500: "1500B"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestInfoField(t *testing.T) {
	info := "# Memory\r\nused_memory:1234\r\nused_memory_human:1.2K\r\nused_memory_dataset:999\r\n"
	if n, err := infoField(info, "used_memory"); err != nil || n != 1234 {
		t.Errorf("used_memory = %d, %v", n, err)
	}
	if n, _ := infoField(info, "used_memory_dataset"); n != 999 {
		t.Errorf("used_memory_dataset = %d", n)
	}
	if _, err := infoField(info, "nope"); err == nil {
		t.Error("missing field gave no error")
	}
	if v := infoString("redis_version:7.0.15\r\n", "redis_version"); v != "7.0.15" {
		t.Errorf("redis_version %q", v)
	}
}
