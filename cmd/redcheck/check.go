package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/meta"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// runCheck is "redcheck check": it runs redissaver's Verify and prints the
// violations and the notes, one per line, then a summary. Exit status 1 when
// there is a violation (notes alone are fine), 2 on a usage or Redis error.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	tgt.withKeys(fs)
	ttl := fs.Duration("ttl", 0, "the saver's Options.TTL, if any: entries of expired checkpoints are then notes, not violations")
	thread := fs.String("thread", "", "check this thread only (default: every thread)")
	timeout := fs.Duration("timeout", 0, "give up after this long (default: no limit)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck check [--url redis://...] [--cluster] [--prefix P] [--shards N] [--key ID=FILE...] [--ttl D] [--thread T]")
		fmt.Fprintln(stderr, "\nVerifies the stored checkpoints of one thread, or of every thread: index entries,")
		fmt.Fprintln(stderr, "checkpoints, channel values, pending writes, parent links and registries. Prints each")
		fmt.Fprintln(stderr, "violation and each note; exits 1 when there is a violation.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}

	rdb, ok := dial(ctx, "check", tgt, stderr)
	if !ok {
		return exitUsage
	}
	defer rdb.Close()
	// A checker writes nothing: New would create a prefix that has no meta
	// key (and so hide a lost one), so that case is settled first.
	layout, err := keys.New(*tgt.prefix, *tgt.shards)
	if err == nil && *thread != "" {
		err = keys.ValidateThreadID(*thread)
	}
	if err != nil {
		fmt.Fprintf(stderr, "redcheck check: %v\n", err)
		return exitUsage
	}
	n, err := rdb.Exists(ctx, layout.Meta()).Result()
	if err == nil && n == 0 {
		err = meta.NoThreads(ctx, rdb, layout)
		if errors.Is(err, checkpoint.ErrDataLoss) {
			fmt.Fprintf(stdout, "violation: %v\n", err)
			return exitFound
		}
		if err == nil {
			fmt.Fprintf(stdout, "prefix %q holds no redcheck data (no meta key %s, no thread in its registries): nothing to check\n", layout.Prefix(), layout.Meta())
			return exitOK
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "redcheck check: %v\n", err)
		return exitUsage
	}
	// The checker reports what eviction did (lost keys are violations), so
	// it accepts any eviction policy; New still refuses a prefix written
	// with another storage format or shard count.
	opts := redissaver.Options{AcceptEviction: true, Prefix: *tgt.prefix, Shards: *tgt.shards, TTL: *ttl}
	if err := tgt.encryption(&opts); err != nil {
		fmt.Fprintf(stderr, "redcheck check: %v\n", err)
		return exitUsage
	}
	s, err := redissaver.New(ctx, rdb, opts)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck check: %v\n", err)
		return exitUsage
	}
	started := time.Now()
	res, err := s.Verify(ctx, *thread)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck check: %v\n", err)
		return exitUsage
	}
	for _, v := range res.Violations {
		fmt.Fprintf(stdout, "violation: %v\n", v)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stdout, "note: %v\n", n)
	}
	fmt.Fprintf(stdout, "checked %d threads, %d checkpoints, %d writes, %d values, %d index entries in %v: %d violations, %d notes\n",
		res.Threads, res.Checkpoints, res.Writes, res.Values, res.Entries, time.Since(started).Round(time.Millisecond),
		len(res.Violations), len(res.Notes))
	if len(res.Violations) > 0 {
		return exitFound
	}
	return exitOK
}

// connect builds the client for url: a cluster client with cluster.
//
// Maintenance notifications (a Redis 8.2 feature) are off: in their default
// auto mode, go-redis v9.16 (the module's floor) logs a line on every
// connection to a server without them, and a short-lived command has no use
// for them.
func connect(url string, cluster bool) (redis.UniversalClient, error) {
	noMaint := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if cluster {
		opt, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, fmt.Errorf("bad cluster URL %s: %w", redactURL(url), err)
		}
		opt.MaintNotificationsConfig = noMaint
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("bad Redis URL %s: %w", redactURL(url), err)
	}
	opt.MaintNotificationsConfig = noMaint
	return redis.NewClient(opt), nil
}

// dial connects to the target and checks that Redis answers; it prints why
// not and returns false when it cannot (the command then exits with
// exitUsage). The caller closes the client.
func dial(ctx context.Context, name string, tgt target, stderr io.Writer) (redis.UniversalClient, bool) {
	rdb, err := connect(*tgt.url, *tgt.cluster)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck %s: %v\n", name, err)
		return nil, false
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		fmt.Fprintf(stderr, "redcheck %s: cannot reach Redis at %s: %v\n", name, redactURL(*tgt.url), err)
		rdb.Close()
		return nil, false
	}
	return rdb, true
}

// redactURL hides the password of a Redis URL in messages.
func redactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
