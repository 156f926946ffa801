package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/redis/go-redis/v9"
)

// One Store used from many goroutines: every write lands once, and reads
// never see a half-written item (each is one atomic script).
func checkConcurrentUse(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	emb, _ := embed.NewHashing(32)
	s := newStore(t, rdb, redisstore.Options{Embedder: emb, Dims: 32})
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := []string{"c", fmt.Sprint("w", w)}
			for i := range each {
				v := map[string]any{"text": fmt.Sprint("item ", i, " of ", w), "i": i, "w": w}
				var err error
				switch i % 3 {
				case 0:
					err = s.Put(ctx, ns, fmt.Sprint("k", i), v)
				case 1:
					_, err = s.Batch(ctx, []redisstore.Op{
						redisstore.PutOp{Namespace: ns, Key: fmt.Sprint("k", i), Value: v},
						redisstore.SearchOp{NamespacePrefix: []string{"c"}, Options: redisstore.SearchOptions{Query: "item", Limit: 3}},
					})
				default:
					if err = s.Put(ctx, ns, fmt.Sprint("k", i), v); err == nil {
						var it *redisstore.Item
						it, err = s.Get(ctx, ns, fmt.Sprint("k", i))
						if err == nil && fmt.Sprint(it.Value["w"]) != fmt.Sprint(w) {
							err = fmt.Errorf("read %v for worker %d", it.Value, w)
						}
					}
				}
				if err == nil {
					_, err = s.Search(ctx, []string{"c"}, redisstore.SearchOptions{Filter: map[string]any{"w": w}, Limit: 5})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.Search(ctx, []string{"c"}, redisstore.SearchOptions{Limit: 1000})
	if err != nil || len(all) != workers*each {
		t.Fatalf("%d items, %v; want %d", len(all), err, workers*each)
	}
	nss, err := s.ListNamespaces(ctx, redisstore.ListNamespacesOptions{})
	if err != nil || len(nss) != workers {
		t.Fatalf("namespaces %v, %v", nss, err)
	}
}

func TestConcurrentUseMiniredis(t *testing.T) {
	_, rdb := redistest.Mini(t)
	checkConcurrentUse(t, rdb)
}

func TestConcurrentUseRealRedis(t *testing.T) {
	checkConcurrentUse(t, redistest.Real(t))
}
