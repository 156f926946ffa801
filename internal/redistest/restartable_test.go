package redistest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestRestartableServerCutTransaction: a crash that cuts the append-only
// file inside a transaction loses nothing acknowledged after the restart,
// across a second restart. Redis 7's own repair (aof-load-truncated yes)
// leaves the MULTI without its EXEC, and the next load drops what was
// written after it; the restartable server repairs with redis-check-aof.
func TestRestartableServerCutTransaction(t *testing.T) {
	r := redistest.StartRestartableServer(t)
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1, MaintNotificationsConfig: redistest.NoMaintNotifications()})
	t.Cleanup(func() { _ = client.Close() })
	if client.ConfigGet(ctx, "aof-load-truncated").Val()["aof-load-truncated"] != "no" {
		t.Skip("no redis-check-aof beside redis-server: the restartable server keeps Redis's own repair")
	}
	if err := client.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r.Kill()
	// What a crash in the middle of writing a transaction leaves: MULTI, a
	// whole command, and part of the next.
	incr, err := filepath.Glob(filepath.Join(r.Dir(), "appendonlydir", "*.incr.aof"))
	if err != nil || len(incr) != 1 {
		t.Fatalf("incr files %v, %v", incr, err)
	}
	f, err := os.OpenFile(incr[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$3\r\ncut\r\n$1\r\n1\r\n*3\r\n$3\r\nSET\r\n$1\r\nc")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	r.Kill()
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"before": "1", "after": "1", "cut": ""} {
		if got := client.Get(ctx, k).Val(); got != want {
			t.Errorf("GET %s = %q, want %q", k, got, want)
		}
	}
}
