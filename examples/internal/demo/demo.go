// Package demo holds what the redcheck examples share: the connection to
// Redis (the server named by REDIS_URL, or an embedded miniredis) and small
// printing helpers.
package demo

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Connect returns a client to the Redis named by the REDIS_URL environment
// variable (any URL redis.ParseURL accepts, e.g. redis://127.0.0.1:6379/15)
// or, when it is unset, to an embedded miniredis started for the occasion.
// where says which one in a line fit for printing; cleanup closes the client
// (and stops miniredis) and must be called once the client is no longer
// used. A REDIS_URL server that does not answer PING within five seconds is
// an error.
func Connect() (rdb *redis.Client, where string, cleanup func(), err error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, "", nil, fmt.Errorf("bad REDIS_URL: %w", err)
		}
		opt.MaintNotificationsConfig = noMaintNotifications()
		rdb = redis.NewClient(opt)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := rdb.Ping(ctx).Err(); err != nil {
			_ = rdb.Close()
			return nil, "", nil, fmt.Errorf("REDIS_URL server %s does not answer PING: %w", opt.Addr, err)
		}
		where = fmt.Sprintf("using Redis at %s, database %d (from REDIS_URL)", opt.Addr, opt.DB)
		return rdb, where, func() { _ = rdb.Close() }, nil
	}
	mr, err := miniredis.Run()
	if err != nil {
		return nil, "", nil, fmt.Errorf("start miniredis: %w", err)
	}
	rdb = redis.NewClient(&redis.Options{Addr: mr.Addr(), MaintNotificationsConfig: noMaintNotifications()})
	cleanup = func() {
		_ = rdb.Close()
		mr.Close()
	}
	return rdb, "using an embedded miniredis (set REDIS_URL=redis://host:port/db to use a real Redis)", cleanup, nil
}

// Embedded reports whether Connect uses an embedded miniredis (REDIS_URL
// unset). miniredis never evicts and reports no eviction policy, so the
// examples set redissaver.Options.AcceptEviction on it only.
func Embedded() bool { return os.Getenv("REDIS_URL") == "" }

// noMaintNotifications turns maintenance notifications (a Redis 8.2 feature)
// off: in their default auto mode, go-redis v9.16 (the module's floor) logs
// a line on every connection to a server without them, miniredis included.
func noMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// Short shortens a checkpoint ID for printing: its last six characters,
// which tell apart IDs made by checkpoint.NewID in one run (a ULID's first
// characters are its timestamp and repeat). "" gives "-".
func Short(id string) string {
	if id == "" {
		return "-"
	}
	if len(id) <= 6 {
		return id
	}
	return "…" + id[len(id)-6:]
}

// Counter returns the counter part of a channel version made by
// checkpoint.NextVersion, without its zero padding and random suffix:
// "000000000003.9f86d081" gives "v3". "" gives "-".
func Counter(version string) string {
	if version == "" {
		return "-"
	}
	digits, _, _ := strings.Cut(version, ".")
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		digits = "0"
	}
	return "v" + digits
}

// Main runs an example named name: it connects (see Connect), prints where,
// and calls run with a context that Ctrl-C, SIGTERM or thirty seconds
// cancel (so an interrupted run still cleans up what it stored). On an
// error it prints it and exits with status 1.
func Main(name string, run func(ctx context.Context, rdb *redis.Client) error) {
	if err := mainErr(name, run); err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", name, err)
		os.Exit(1)
	}
}

func mainErr(name string, run func(ctx context.Context, rdb *redis.Client) error) error {
	rdb, where, closeConn, err := Connect()
	if err != nil {
		return err
	}
	defer closeConn()
	fmt.Printf("redcheck %s: %s\n", name, where)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return run(ctx, rdb)
}
