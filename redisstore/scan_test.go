package redisstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A walk in steps of 3 entries meets every item present and unchanged
// throughout exactly once, while the items around its cursor are updated
// and deleted between steps, and while ties (items written by one script
// share an UpdatedAt) span several steps.
func checkScanResumes(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	s, err := New(context.Background(), rdb, Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for i := range 40 {
		ops = append(ops, PutOp{Namespace: []string{"w", fmt.Sprint(i % 2)}, Key: fmt.Sprintf("k%02d", i), Value: map[string]any{"i": i}})
	}
	if _, err := s.Batch(ctx, ops); err != nil { // one script: every UpdatedAt ties
		t.Fatal(err)
	}
	lo, hi := lexRange([]string{"w"})
	seen := map[string]int{}
	var cur scanCursor
	touched := map[string]bool{}
	for step := 0; ; step++ {
		done, err := s.scanStep(ctx, lo, hi, 0, "u", 3, &cur, func(e scanEntry) error { seen[e.id]++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if step > 100 {
			t.Fatal("the walk does not end")
		}
		if cur.last == "" {
			continue
		}
		// Move the cursor's item away (update or delete), alternately.
		ns, key, err := splitID(encodedNSOf(cur.member) + ":" + cur.last)
		if err != nil {
			t.Fatal(err)
		}
		touched[encodeNS(ns)+":"+cur.last] = true
		if step%2 == 0 {
			err = s.Put(ctx, ns, key, map[string]any{"moved": true})
		} else {
			err = s.Delete(ctx, ns, key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		id := fmt.Sprintf("w:%d:k%02d", i%2, i)
		if n := seen[id]; n != 1 && !touched[id] {
			t.Errorf("%s met %d times", id, n)
		}
	}
	if len(touched) < 5 {
		t.Fatalf("only %d items moved under the cursor", len(touched))
	}
}

// encodedNSOf returns the encoded namespace of a registry member: what
// follows its first 0x00 0x00.
func encodedNSOf(member string) string {
	_, ns, _ := strings.Cut(member, "\x00\x00")
	return ns
}

func TestScanResumesMiniredis(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkScanResumes(t, rdb)
}

func TestScanResumesRealRedis(t *testing.T) { checkScanResumes(t, redistest.Real(t)) }
