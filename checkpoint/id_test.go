package checkpoint

import (
	"fmt"
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"
)

func TestNewIDFormat(t *testing.T) {
	id := NewID()
	if len(id) != 26 {
		t.Fatalf("len(%q) = %d, want 26", id, len(id))
	}
	if _, err := ulid.ParseStrict(id); err != nil {
		t.Fatalf("%q is not a ULID: %v", id, err)
	}
}

func TestNewIDStrictlyIncreasing(t *testing.T) {
	prev := NewID()
	for i := range 100_000 {
		id := NewID()
		if id <= prev {
			t.Fatalf("call %d: %q is not greater than %q", i, id, prev)
		}
		prev = id
	}
}

func TestNewIDConcurrent(t *testing.T) {
	const goroutines, perG = 8, 10_000
	results := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]string, perG)
			for i := range ids {
				ids[i] = NewID()
			}
			results[g] = ids
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*perG)
	for g, ids := range results {
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("goroutine %d: %q after %q", g, id, ids[i-1])
			}
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != goroutines*perG {
		t.Fatalf("got %d distinct ids, want %d", len(seen), goroutines*perG)
	}
}

func ExampleNewID() {
	a, b := NewID(), NewID() // e.g. "01J0Y8ZQ6V6Q4A1E3B0N5S7C2D"
	fmt.Println(len(a), a < b)
	// Output: 26 true
}
