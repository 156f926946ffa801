package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestRun runs the example end to end on miniredis and on a real Redis:
// the scrape shows every metric of the saver's, the consumer's and the
// store's calls and the gauges (two expired threads before the Sweep, none
// after), the spans a Put under the agent's step, a consumer's linked to
// the saver's span that wrote its event, and a store call; nothing shows
// what the agent stored.
func TestRun(t *testing.T) {
	_, mini := redistest.Mini(t)
	check(t, "miniredis", mini)
	check(t, "Redis", redistest.Real(t))
}

func check(t *testing.T, where string, rdb *redis.Client) {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), rdb, &out); err != nil {
		t.Fatalf("on %s: %v", where, err)
	}
	got := out.String()
	for _, want := range []string{
		"# TYPE db_client_operation_duration_seconds histogram",
		`db_client_operation_duration_seconds_count{db_operation_name="Put"`,
		`redcheck_client_refused_writes_total{db_operation_name="Put",db_system_name="redis",error_type="invalid_checkpoint"`,
		"# TYPE messaging_process_duration_seconds histogram",
		`messaging_client_consumed_messages_total{messaging_consumer_group_name="indexer"`,
		"# TYPE redcheck_consumer_lag gauge",
		"# TYPE redcheck_reclaim_backlog gauge",
		"# TYPE redcheck_threads_expired gauge",
		"Put  kind=client",
		"process indexer  kind=consumer",
		"gen_ai.conversation.id = support-1",
		// The consumer's span links to the saver's span that wrote the event.
		"    link -> Put",
		"StorePut  kind=client",
		"redcheck.store.namespace = [memories support-1]",
		`db_client_operation_duration_seconds_count{db_operation_name="StorePut"`,
		`db_client_operation_duration_seconds_count{db_operation_name="StoreSearch"`,
		"# TYPE redcheck_store_written_bytes_total counter",
		"# TYPE redcheck_store_read_bytes_total counter",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("on %s: the output lacks %q", where, want)
		}
	}
	expired := regexp.MustCompile(`(?m)^redcheck_threads_expired\{[^}]*\} (\d+)$`).FindAllStringSubmatch(got, -1)
	if len(expired) != 2 || expired[0][1] != "2" || expired[1][1] != "0" {
		t.Errorf("on %s: redcheck_threads_expired %v, want 2 before the Sweep, 0 after", where, expired)
	}
	if where == "Redis" {
		for _, m := range regexp.MustCompile(`(?m)^redcheck_consumer_lag\{[^}]*\} (\d+)$`).FindAllStringSubmatch(got, -1) {
			if m[1] != "0" {
				t.Errorf("on Redis, every event handled: %s", m[0])
			}
		}
	}
	if strings.Contains(got, secret) {
		t.Errorf("on %s: the output shows a stored value (%s)", where, secret)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("on %s:\n%s", where, got)
	}
}
