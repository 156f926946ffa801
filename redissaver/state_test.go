package redissaver_test

import (
	"context"

	"crypto/sha256"
	"fmt"
	"github.com/graphstate/redcheck/redissaver"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// rawState returns every key under prefix with its type and a digest of its
// whole content (TTL aside), sorted: two states are equal when no key was
// added, removed or changed in any byte. It reads each type with plain
// commands (miniredis has no DUMP of its other types).
func rawState(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(ks))
	for _, k := range ks {
		typ := rdb.Type(ctx, k).Val()
		var content any
		switch typ {
		case "string":
			content = rdb.Get(ctx, k).Val()
		case "hash":
			content = rdb.HGetAll(ctx, k).Val() // fmt prints a map sorted
		case "set":
			m := rdb.SMembers(ctx, k).Val()
			slices.Sort(m)
			content = m
		case "zset":
			content = rdb.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "list":
			content = rdb.LRange(ctx, k, 0, -1).Val()
		case "stream":
			content = rdb.XRange(ctx, k, "-", "+").Val()
		}
		out = append(out, fmt.Sprintf("%s %s %x", k, typ, sha256.Sum256([]byte(fmt.Sprint(content)))))
	}
	slices.Sort(out)
	return out
}

// violations returns what Verify finds in s for threadID ("" for every
// thread).
func violations(ctx context.Context, s *redissaver.Saver, threadID string) ([]redissaver.Violation, error) {
	res, err := s.Verify(ctx, threadID)
	if err != nil {
		return nil, err
	}
	return res.Violations, nil
}
