package redissaver_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/internal/scripts"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// The least privilege a saver needs. For a saver with prefix P, as a
// redis.conf/ACL file line or an ACL SETUSER command:
//
//	user redcheck on >PASSWORD resetkeys ~P:* resetchannels -@all +evalsha +eval +script|load +ping +info +multi +exec +del +exists +hdel +hexists +hget +hgetall +hkeys +hmget +hscan +hset +hsetnx +hstrlen +persist +pexpire +pttl +rename +sadd +sismember +srandmember +srem +sscan +time +unlink +xadd +zadd +zcard +zrange +zrangebylex +zrangebyscore +zrem +zrevrange +zrevrangebylex +zscore
//
// and on a Redis Cluster add +cluster|slots (go-redis's ClusterClient reads
// the slot map with it). The saver itself sends nothing but EVALSHA, EVAL
// (when Redis lacks a script) and SCRIPT LOAD (LoadScripts, and pipelines
// after a SCRIPT FLUSH); the other commands are the ones its Lua scripts
// call, which Redis checks against the user's ACL like any command, keys
// included. +ping is for the caller's health checks (redcheck check pings).
// HELLO and AUTH, which go-redis sends on connecting, need no permission.
// The event stream readers (package stream) need their own read commands.
//
// TestACLLineCoversScripts keeps this line in step with the scripts.
const aclCommands = "+evalsha +eval +script|load +ping +info +multi +exec +del +exists +hdel +hexists +hget +hgetall +hkeys +hmget +hscan +hset +hsetnx +hstrlen +persist +pexpire +pttl +rename +sadd +sismember +srandmember +srem +sscan +time +unlink +xadd +zadd +zcard +zrange +zrangebylex +zrangebyscore +zrem +zrevrange +zrevrangebylex +zscore"

// aclSetUser is the ACL SETUSER command that creates the least-privileged
// user of prefix, with the cluster addition when cluster is set.
func aclSetUser(name, password, prefix string, cluster bool) []any {
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">" + password, "resetkeys", "~" + prefix + ":*", "resetchannels", "-@all"}
	for _, c := range strings.Fields(aclCommands) {
		args = append(args, c)
	}
	if cluster {
		args = append(args, "+cluster|slots")
	}
	return args
}

// saverScripts lists the saver's script files: every .lua file but lib.lua
// (prepended to each) and the store's (store_*.lua, package redisstore).
func saverScripts() []string {
	var out []string
	for _, f := range scripts.Files() {
		if f != "lib.lua" && !strings.HasPrefix(f, "store_") {
			out = append(out, f)
		}
	}
	return out
}

// scriptCommands returns the commands the saver's scripts call, lower case.
func scriptCommands(t *testing.T) []string {
	t.Helper()
	call := regexp.MustCompile(`(?:redis\.p?call|chunked)\('([A-Za-z]+)'`)
	seen := map[string]bool{}
	for _, f := range saverScripts() {
		src, err := scripts.Source(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(src, -1) {
			seen[strings.ToLower(m[1])] = true
		}
		if regexp.MustCompile(`redis\.p?call\([^'c]`).MatchString(src) {
			// Only lib.lua's chunked passes a command in a variable; any
			// other dynamic call would escape this list.
			for _, line := range strings.Split(src, "\n") {
				if regexp.MustCompile(`redis\.p?call\([^'c]`).MatchString(line) && !strings.Contains(line, "redis.call(cmd, key") {
					t.Errorf("%s: a command this test cannot see: %s", f, line)
				}
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for c := range seen {
			if !yield(c) {
				return
			}
		}
	})
}

// TestACLLineCoversScripts: the documented ACL line grants every command
// the scripts call, and nothing the scripts and the saver do not need.
func TestACLLineCoversScripts(t *testing.T) {
	granted := map[string]bool{}
	for _, c := range strings.Fields(aclCommands) {
		granted[strings.TrimPrefix(c, "+")] = true
	}
	need := scriptCommands(t)
	for _, c := range need {
		if !granted[c] {
			t.Errorf("the scripts call %s, which the ACL line (aclCommands, and the README) does not grant", strings.ToUpper(c))
		}
		delete(granted, c)
	}
	// New reads INFO memory and writes the meta key in a MULTI.
	for _, c := range []string{"evalsha", "eval", "script|load", "ping", "info", "multi", "exec"} {
		delete(granted, c)
	}
	for c := range granted {
		t.Errorf("the ACL line grants %s, which no script calls", c)
	}
	t.Logf("the scripts call %d commands: %s", len(need), strings.Join(need, " "))
}

// TestACLConformance runs the whole conformance kit, and a check, as a user
// limited to the saver's prefix and the commands of the ACL line, on a
// dedicated redis-server.
func TestACLConformance(t *testing.T) {
	addr := redistest.StartServer(t)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	if err := admin.Do(ctx, aclSetUser("saver", "s3cret", prefix, false)...).Err(); err != nil {
		t.Fatal(err)
	}
	user := redis.NewClient(&redis.Options{Addr: addr, Username: "saver", Password: "s3cret"})
	t.Cleanup(func() { _ = user.Close() })

	groups := 0
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		groups++
		s, err := redissaver.New(context.Background(), user, redissaver.Options{AcceptEviction: true, Prefix: fmt.Sprint(prefix, ":", groups), Shards: 4})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.LoadScripts(ctx); err != nil {
			t.Fatalf("LoadScripts as the limited user: %v", err)
		}
		t.Cleanup(func() {
			if _, err := violations(ctx, s, ""); err != nil {
				t.Errorf("Check as the limited user: %v", err)
			}
		})
		return s
	})
	if err := user.Ping(ctx).Err(); err != nil {
		t.Errorf("PING as the limited user: %v", err)
	}

	// The same user cannot touch anything outside its prefix, directly or
	// from a script, nor run commands outside its list.
	other := "elsewhere:" + prefix
	if err := admin.Set(ctx, other, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Del(context.Background(), other) })
	for name, err := range map[string]error{
		"GET outside the prefix":             user.Get(ctx, other).Err(),
		"HSET outside the prefix":            user.HSet(ctx, other+"h", "f", "v").Err(),
		"DEL outside the prefix":             user.Del(ctx, other).Err(),
		"script writing outside":             user.Eval(ctx, "return redis.call('HSET', KEYS[1], 'f', 'x')", []string{other}).Err(),
		"script reaching outside its KEYS":   user.Eval(ctx, "return redis.call('HGET', ARGV[1], 'f')", []string{prefix + ":k"}, other).Err(),
		"script calling an unlisted command": user.Eval(ctx, "return redis.call('SET', KEYS[1], 'x')", []string{prefix + ":k"}).Err(),
		"SET inside the prefix (not listed)": user.Set(ctx, prefix+":k", "v", 0).Err(),
		"KEYS":                               user.Keys(ctx, "*").Err(),
		"FLUSHALL":                           user.FlushAll(ctx).Err(),
		"CONFIG SET":                         user.ConfigSet(ctx, "maxmemory", "1").Err(),
		"a saver under another prefix":       otherPrefixPut(ctx, user),
	} {
		if err == nil || !(strings.Contains(err.Error(), "NOPERM") || strings.Contains(err.Error(), "The user executing the script can't")) {
			t.Errorf("%s as the limited user: %v, want a permission error", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if got := admin.Get(ctx, other).Val(); got != "v" {
		t.Errorf("key outside the prefix changed to %q", got)
	}
}

// otherPrefixPut tries a Put with a prefix the user has no rights on.
func otherPrefixPut(ctx context.Context, rdb redis.UniversalClient) error {
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, Prefix: "intruder"})
	if err != nil {
		return err
	}
	_, err = s.Put(ctx, checkpoint.Config{ThreadID: "t"}, checkpoint.Checkpoint{ID: checkpoint.NewID()}, nil, nil)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return err
	}
	return nil
}
