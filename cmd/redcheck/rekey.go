package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/scriptrun"
	"github.com/graphstate/redcheck/internal/seal"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/redis/go-redis/v9"
)

// Bounds of rekey's steps: a read (HSCAN, ZSCAN, ZRANGE) asks for a batch
// of entries, and one compare-and-set call (rekey.lua) replaces at most
// --batch fields and about rekeyBytes bytes of values (read and written:
// one value may exceed it, alone).
const (
	defaultRekeyBatch = 64
	maxRekeyBatch     = 256
	rekeyBytes        = 512 << 10
	maxFailures       = 100 // failures listed in the output
)

// rekeyCounts are the figures of one kind of value.
type rekeyCounts struct {
	Read      int `json:"read"`      // values read (empty markers aside)
	Rekeyed   int `json:"rekeyed"`   // replaced by their form under the current key
	Current   int `json:"current"`   // under the current key already: left as they are
	Plaintext int `json:"plaintext"` // in the clear, left so without --read-plaintext
	Changed   int `json:"changed"`   // rewritten by a writer since they were read: left
	Gone      int `json:"gone"`      // deleted since they were read: left
	Failed    int `json:"failed"`    // could not be opened (unknown key id, altered, misplaced)
}

// rekeySummary is the output of "redcheck rekey --json".
type rekeySummary struct {
	CurrentKey string      `json:"current_key"`
	DryRun     bool        `json:"dry_run"`
	Threads    int         `json:"threads"`
	Values     rekeyCounts `json:"values"`
	Writes     rekeyCounts `json:"writes"`
	Items      rekeyCounts `json:"items"`
	Calls      int         `json:"calls"`
	Seconds    float64     `json:"seconds"`
	Failures   []string    `json:"failures"`
	// Missing are the threads named that do not exist.
	Missing []string `json:"missing_threads"`
	// Left is the number of values not under the current key after the
	// run (failed, and plaintext without --read-plaintext): 0 when the
	// prefix is done.
	Left int `json:"left"`
}

// runRekey is "redcheck rekey THREAD... | --all [--store]": every stored
// value of the threads (and the store's items) re-encrypted under the
// keyring's current key, in bounded steps, with compare-and-set writes.
func runRekey(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rekey", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tgt := targetFlags(fs)
	kf := addKeyFlags(fs, "encrypt the values stored in the clear too (migration to encryption at rest)")
	all := fs.Bool("all", false, "rekey every thread of the prefix")
	store := fs.Bool("store", false, "rekey the items of the memory store at --store-prefix too")
	storePrefix := fs.String("store-prefix", redisstore.DefaultPrefix, "the memory store's prefix (redisstore Options.Prefix)")
	batch := fs.Int("batch", defaultRekeyBatch, fmt.Sprintf("values replaced per call to Redis, 1 to %d", maxRekeyBatch))
	pause := fs.Duration("pause", 0, "pause between two calls that write (default: none)")
	dry := fs.Bool("dry-run", false, "read and count, write nothing")
	asJSON := fs.Bool("json", false, "print the summary as one JSON document")
	progress := fs.Duration("progress", 2*time.Second, "print progress to standard error this often (0: never)")
	timeout := fs.Duration("timeout", 0, "give up after this long (default: no limit; a rekey stopped is resumed by running it again)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redcheck rekey THREAD... | --all | --store  --key ID=FILE... [--current-key ID] [--read-plaintext]")
		fmt.Fprintln(stderr, "       [--url redis://...] [--cluster] [--prefix P] [--shards N] [--store-prefix S] [--batch N] [--dry-run] [--json]")
		fmt.Fprintln(stderr, "\nRe-encrypts every stored value of the threads (channel values, pending writes, early writes)")
		fmt.Fprintln(stderr, "and, with --store, the memory store's items, under the keyring's current key, in bounded steps,")
		fmt.Fprintln(stderr, "while agents write: a value is replaced only where it still holds the bytes read. Values under")
		fmt.Fprintln(stderr, "the current key already are skipped, so a rekey stopped is finished by running it again.")
		fmt.Fprintln(stderr, "Exits 1 when values are left that are not under the current key (see the failures), or a thread")
		fmt.Fprintln(stderr, "named does not exist.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args, stderr, 0, math.MaxInt)
	if !ok {
		return code
	}
	if *all && len(pos) > 0 || !*all && len(pos) == 0 && !*store {
		fmt.Fprintln(stderr, "redcheck rekey: name the threads, or give --all, or --store (threads and --all exclude each other)")
		fs.Usage()
		return exitUsage
	}
	if *batch < 1 || *batch > maxRekeyBatch {
		fmt.Fprintf(stderr, "redcheck rekey: --batch %d: want 1 to %d\n", *batch, maxRekeyBatch)
		return exitUsage
	}
	var threads []string
	for _, th := range pos {
		if err := keys.ValidateThreadID(th); err != nil {
			fmt.Fprintf(stderr, "redcheck rekey: %v\n", err)
			return exitUsage
		}
		if !slices.Contains(threads, th) {
			threads = append(threads, th)
		}
	}
	ring, ok := kf.keyringFor("rekey", stderr)
	if !ok {
		return exitUsage
	}
	if ring == nil {
		fmt.Fprintln(stderr, "redcheck rekey: no keys: give the keyring with --key ID=FILE or --key-env ID=VARIABLE")
		return exitUsage
	}
	layout, err := keys.New(*tgt.prefix, *tgt.shards)
	if err != nil {
		fmt.Fprintf(stderr, "redcheck rekey: %v\n", err)
		return exitUsage
	}
	if *store {
		if _, err := keys.New(*storePrefix, 1); err != nil {
			fmt.Fprintf(stderr, "redcheck rekey: --store-prefix: %v\n", err)
			return exitUsage
		}
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	rdb, ok := dial(ctx, "rekey", tgt, stderr)
	if !ok {
		return exitUsage
	}
	defer rdb.Close()
	if len(threads) > 0 || *all {
		// A prefix written with another shard count would be walked wrong.
		m, err := rdb.HGetAll(ctx, layout.Meta()).Result()
		if err != nil {
			fmt.Fprintf(stderr, "redcheck rekey: %v\n", err)
			return exitUsage
		}
		if s := m["shards"]; s != "" && s != fmt.Sprint(layout.Shards()) {
			fmt.Fprintf(stderr, "redcheck rekey: prefix %q was written with %s shards, not %d (--shards)\n", layout.Prefix(), s, layout.Shards())
			return exitUsage
		}
	}

	r := &rekeyer{
		rdb: rdb, layout: layout, ring: ring, plain: *kf.plain, dry: *dry, batch: *batch, pause: *pause,
		storePrefix: *storePrefix, progress: *progress, stderr: stderr, started: time.Now(),
	}
	r.sum.CurrentKey, r.sum.DryRun = ring.CurrentKeyID(), *dry
	r.lastProgress = r.started
	err = r.run(ctx, threads, *all, *store)
	r.sum.Seconds = math.Round(time.Since(r.started).Seconds()*1000) / 1000
	r.sum.Left = r.sum.Values.Failed + r.sum.Values.Plaintext + r.sum.Writes.Failed + r.sum.Writes.Plaintext +
		r.sum.Items.Failed + r.sum.Items.Plaintext
	if r.sum.Failures == nil {
		r.sum.Failures = []string{}
	}
	if r.sum.Missing == nil {
		r.sum.Missing = []string{}
	}
	if *asJSON {
		b, _ := json.Marshal(r.sum)
		fmt.Fprintln(stdout, string(b))
	} else {
		r.printSummary(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "redcheck rekey: %v (run the same command again to go on)\n", err)
		return exitUsage
	}
	if r.sum.Left > 0 || len(r.sum.Missing) > 0 {
		return exitFound
	}
	return exitOK
}

func (r *rekeyer) printSummary(w io.Writer) {
	s := r.sum
	for _, f := range s.Failures {
		fmt.Fprintf(w, "failed: %s\n", f)
	}
	for _, th := range s.Missing {
		fmt.Fprintf(w, "no thread %q\n", th)
	}
	verb := "rekeyed"
	if s.DryRun {
		verb = "would rekey"
	}
	line := func(name string, c rekeyCounts) {
		fmt.Fprintf(w, "%s: %d read, %s %d, %d under %q already, %d plaintext left, %d changed and %d deleted meanwhile, %d failed\n",
			name, c.Read, verb, c.Rekeyed, c.Current, s.CurrentKey, c.Plaintext, c.Changed, c.Gone, c.Failed)
	}
	fmt.Fprintf(w, "%d threads\n", s.Threads)
	line("channel values", s.Values)
	line("pending writes", s.Writes)
	line("store items", s.Items)
	fmt.Fprintf(w, "%d calls in %.3fs; %d values left not under the current key\n", s.Calls, s.Seconds, s.Left)
	if s.Values.Plaintext+s.Writes.Plaintext+s.Items.Plaintext > 0 {
		fmt.Fprintln(w, "plaintext values are encrypted with --read-plaintext")
	}
}

// beforeRekeyCall, when set (by tests), is called before each call of the
// compare-and-set script with its keys and arguments: the window in which a
// concurrent writer may change what was read.
var beforeRekeyCall func(keys []string, args []any)

// rekeyer walks stored values and replaces them by their re-encrypted
// form.
type rekeyer struct {
	rdb         redis.UniversalClient
	layout      keys.Layout
	ring        *checkpoint.Keyring
	plain, dry  bool
	batch       int
	pause       time.Duration
	storePrefix string

	progress     time.Duration
	stderr       io.Writer
	started      time.Time
	lastProgress time.Time
	sum          rekeySummary

	// The pending call: replacements of fields of hashes of one slot, of
	// one kind (its counts).
	keys   []string
	keyAt  map[string]int
	args   []any
	n      int
	bytes  int
	counts *rekeyCounts
}

// run rekeys the threads named, or every thread, and the store's items.
func (r *rekeyer) run(ctx context.Context, threads []string, all, store bool) error {
	for _, th := range threads {
		found := r.sum.Threads
		if err := r.thread(ctx, th); err != nil {
			return err
		}
		if r.sum.Threads == found {
			r.sum.Missing = append(r.sum.Missing, th)
		}
		if err := r.early(ctx, r.layout.Shard(th), th); err != nil {
			return err
		}
	}
	if all {
		for n := range r.layout.Shards() {
			if err := r.shard(ctx, n); err != nil {
				return err
			}
		}
	}
	if store {
		return r.store(ctx)
	}
	return nil
}

// shard rekeys every thread of shard n (its registry), then the shard's
// early writes.
func (r *rekeyer) shard(ctx context.Context, n int) error {
	var threads []string
	var cursor uint64
	for {
		page, next, err := r.rdb.ZScan(ctx, r.layout.Threads(n), cursor, "", int64(r.batch)).Result()
		if err != nil {
			return err
		}
		for i := 0; i < len(page); i += 2 {
			if page[i] == "" {
				continue // the registry's marker
			}
			th, err := keys.Decode(page[i])
			if err != nil {
				r.fail(fmt.Sprintf("shard %d: registry member %q: %v", n, page[i], err), &r.sum.Values)
				continue
			}
			if !slices.Contains(threads, th) { // ZSCAN may return a member twice
				threads = append(threads, th)
			}
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	for _, th := range threads {
		if err := r.thread(ctx, th); err != nil {
			return err
		}
	}
	return r.early(ctx, n, "")
}

// thread rekeys the values and pending writes of the current generation of
// a thread, namespace by namespace.
func (r *rekeyer) thread(ctx context.Context, th string) error {
	gen, err := r.rdb.HGet(ctx, r.layout.Head(th), keys.HeadGeneration).Result()
	if errors.Is(err, redis.Nil) {
		return nil // no such thread (or deleted meanwhile)
	}
	if err != nil {
		return err
	}
	r.sum.Threads++
	var cursor uint64
	for {
		page, next, err := r.rdb.SScan(ctx, r.layout.Namespaces(th, gen), cursor, "", int64(r.batch)).Result()
		if err != nil {
			return err
		}
		for _, encns := range page {
			ns, err := keys.Decode(encns)
			if err != nil {
				r.fail(fmt.Sprintf("thread %q: namespace %q: %v", th, encns, err), &r.sum.Values)
				continue
			}
			if err := r.values(ctx, th, gen, ns); err != nil {
				return err
			}
			if err := r.checkpoints(ctx, th, gen, ns); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// values rekeys the channel values of a namespace: its values hash, an
// HSCAN page at a time.
func (r *rekeyer) values(ctx context.Context, th, gen, ns string) error {
	key := r.layout.Blobs(th, gen, ns)
	prefix := r.layout.Prefix()
	var cursor uint64
	for {
		page, next, err := r.rdb.HScan(ctx, key, cursor, "", int64(r.batch)).Result()
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(page); i += 2 {
			field, stored := page[i], page[i+1]
			if field == "#" || stored == "" {
				continue // the hash's marker; a version without a value
			}
			n, rest, ok := codec.CutLen(field)
			if !ok || n > len(rest) {
				r.fail(fmt.Sprintf("thread %q namespace %q: values field %q is not len:channel version", th, ns, field), &r.sum.Values)
				continue
			}
			channel, version := rest[:n], rest[n:]
			place := func() string {
				return fmt.Sprintf("thread %q namespace %q: channel %q version %q", th, ns, channel, version)
			}
			aad := func() []byte { return seal.ChannelAAD(prefix, th, ns, channel, version) }
			out, ok := r.reseal(ctx, &r.sum.Values, stored, false, aad, place)
			if ok {
				if err := r.replace(ctx, &r.sum.Values, key, field, stored, out); err != nil {
					return err
				}
			}
		}
		if next == 0 {
			return r.flush(ctx)
		}
		cursor = next
	}
}

// checkpoints rekeys the pending writes of the checkpoints of a namespace:
// its index a page of IDs at a time, the w: fields of a page's checkpoint
// hashes in one pipeline.
func (r *rekeyer) checkpoints(ctx context.Context, th, gen, ns string) error {
	idx := r.layout.Index(th, gen, ns)
	min := "-"
	for {
		ids, err := r.rdb.ZRangeByLex(ctx, idx, &redis.ZRangeBy{Min: min, Max: "+", Count: int64(r.batch)}).Result()
		if err != nil {
			return err
		}
		hashes := make([]string, len(ids))
		for i, id := range ids {
			hashes[i] = r.layout.Checkpoint(th, gen, ns, id)
		}
		if err := r.writeHashes(ctx, th, ns, ids, hashes); err != nil {
			return err
		}
		if len(ids) < r.batch {
			return nil
		}
		min = "(" + ids[len(ids)-1]
	}
}

// early rekeys the early writes of shard n (ZSCAN of its early index): of
// thread th only, or of every thread when th is "".
func (r *rekeyer) early(ctx context.Context, n int, th string) error {
	match := ""
	if th != "" {
		match = keys.Encode(th) + "\x00*"
	}
	var cursor uint64
	seen := map[string]bool{}
	for {
		page, next, err := r.rdb.ZScan(ctx, r.layout.EarlyIndex(n), cursor, match, int64(r.batch)).Result()
		if err != nil {
			return err
		}
		var ths, nss, ids, hashes []string
		for i := 0; i < len(page); i += 2 {
			m := page[i]
			if seen[m] {
				continue
			}
			seen[m] = true
			parts := strings.SplitN(m, "\x00", 3)
			if len(parts) != 3 {
				continue // not an early member: nothing to rekey
			}
			t, err1 := keys.Decode(parts[0])
			ns, err2 := keys.Decode(parts[1])
			if err1 != nil || err2 != nil {
				continue
			}
			ths, nss, ids = append(ths, t), append(nss, ns), append(ids, parts[2])
			hashes = append(hashes, r.layout.Early(t, ns, parts[2]))
		}
		// One thread at a time: the writes of a call share its slot, and
		// writeHashes takes one thread and namespace.
		for i := range hashes {
			if err := r.writeHashes(ctx, ths[i], nss[i], ids[i:i+1], hashes[i:i+1]); err != nil {
				return err
			}
		}
		if next == 0 {
			return r.flush(ctx)
		}
		cursor = next
	}
}

// writeHashes rekeys the w: fields of hashes (checkpoint or early-write
// hashes of thread th and namespace ns), hashes[i] being checkpoint ids[i]'s.
func (r *rekeyer) writeHashes(ctx context.Context, th, ns string, ids, hashes []string) error {
	if len(hashes) == 0 {
		return nil
	}
	type scan struct {
		i      int
		cursor uint64
	}
	todo := make([]scan, len(hashes))
	for i := range hashes {
		todo[i] = scan{i: i}
	}
	prefix := r.layout.Prefix()
	for len(todo) > 0 {
		pipe := r.rdb.Pipeline()
		cmds := make([]*redis.ScanCmd, len(todo))
		for j, s := range todo {
			cmds[j] = pipe.HScan(ctx, hashes[s.i], s.cursor, "w:*", 1024)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		var again []scan
		for j, s := range todo {
			page, next := cmds[j].Val()
			for k := 0; k+1 < len(page); k += 2 {
				field, stored := page[k], page[k+1]
				task, idx, ok := codec.ParseWriteField(field)
				var parts [3]string // channel, task path, value
				if !ok || !codec.Unpack(stored, parts[:]) {
					r.fail(fmt.Sprintf("thread %q namespace %q checkpoint %q: pending write %q is malformed", th, ns, ids[s.i], field), &r.sum.Writes)
					continue
				}
				channel, value := parts[0], parts[2]
				if value == "" {
					continue
				}
				id := ids[s.i]
				place := func() string {
					return fmt.Sprintf("thread %q namespace %q checkpoint %q: write %d of task %q to %q", th, ns, id, idx, task, channel)
				}
				aad := func() []byte { return seal.WriteAAD(prefix, th, ns, id, task, idx, channel) }
				out, ok := r.reseal(ctx, &r.sum.Writes, value, false, aad, place)
				if ok {
					head := stored[:len(stored)-len(value)] // pack(channel, task path, ) as stored
					if err := r.replace(ctx, &r.sum.Writes, hashes[s.i], field, stored, head+out); err != nil {
						return err
					}
				}
			}
			if next != 0 {
				again = append(again, scan{i: s.i, cursor: next})
			}
		}
		todo = again
	}
	return r.flush(ctx)
}

// store rekeys the items of the memory store: its registry's namespaces
// (ZSCAN), each namespace's items (ZSCAN of its index), their values in one
// pipeline per page.
func (r *rekeyer) store(ctx context.Context) error {
	base := "{" + r.storePrefix + "}:"
	var cursor uint64
	seen := map[string]bool{}
	for {
		page, next, err := r.rdb.ZScan(ctx, base+"ns", cursor, "", int64(r.batch)).Result()
		if err != nil {
			return err
		}
		for i := 0; i < len(page); i += 2 {
			m := page[i]
			at := strings.Index(m, "\x00\x00")
			if m == "" || at < 0 || seen[m] {
				continue // the registry's marker
			}
			seen[m] = true
			encns := m[at+2:]
			if err := r.storeNamespace(ctx, base, encns); err != nil {
				return err
			}
		}
		if next == 0 {
			return r.flush(ctx)
		}
		cursor = next
	}
}

func (r *rekeyer) storeNamespace(ctx context.Context, base, encns string) error {
	var ns []string
	for _, l := range strings.Split(encns, ":") {
		label, err := keys.Decode(l)
		if err != nil || label == "" {
			r.fail(fmt.Sprintf("store namespace %q is malformed", encns), &r.sum.Items)
			return nil
		}
		ns = append(ns, label)
	}
	var cursor uint64
	seen := map[string]bool{}
	for {
		page, next, err := r.rdb.ZScan(ctx, base+"n:"+encns, cursor, "", int64(r.batch)).Result()
		if err != nil {
			return err
		}
		var ks []string
		for i := 0; i < len(page); i += 2 {
			if !seen[page[i]] {
				seen[page[i]] = true
				ks = append(ks, page[i])
			}
		}
		pipe := r.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(ks))
		for i, k := range ks {
			cmds[i] = pipe.HGet(ctx, base+"i:"+encns+":"+k, "v")
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		for i, k := range ks {
			stored, err := cmds[i].Result()
			if errors.Is(err, redis.Nil) || stored == "" {
				continue // expired or deleted meanwhile
			}
			key, err := keys.Decode(k)
			if err != nil {
				r.fail(fmt.Sprintf("store namespace %q: key %q is malformed", ns, k), &r.sum.Items)
				continue
			}
			place := func() string { return fmt.Sprintf("store item: namespace %q, key %q", ns, key) }
			aad := func() []byte { return seal.ItemAAD(r.storePrefix, ns, key) }
			out, ok := r.reseal(ctx, &r.sum.Items, stored, true, aad, place)
			if ok {
				if err := r.replace(ctx, &r.sum.Items, base+"i:"+encns+":"+k, "v", stored, out); err != nil {
					return err
				}
			}
		}
		if next == 0 {
			return r.flush(ctx)
		}
		cursor = next
	}
}

// reseal returns stored (a stored value, read at the place aad names) sealed
// with the current key, and true when it is to be replaced by it; it counts
// the value read, and the values it leaves. item says a store item's value,
// whose plain form is canonical JSON (sealed as pack("json", it)).
func (r *rekeyer) reseal(ctx context.Context, c *rekeyCounts, stored string, item bool, aad func() []byte, place func() string) (string, bool) {
	c.Read++
	var plain string
	switch {
	case seal.IsSealed(stored):
		env, err := seal.Parse(stored)
		if err == nil && env.KeyID == r.ring.CurrentKeyID() {
			c.Current++ // its tag is not checked: a reader does that
			return "", false
		}
		if plain, err = codec.OpenValue(ctx, r.ring, false, stored, aad, place); err != nil {
			r.fail(err.Error(), c)
			return "", false
		}
	case !r.plain:
		c.Plaintext++
		return "", false
	case item:
		if stored[0] != '{' {
			r.fail(fmt.Sprintf("%s: a plaintext value that is not a JSON object", place()), c)
			return "", false
		}
		plain = codec.PackValue("json", []byte(stored))
	default:
		if !(stored[0] >= '1' && stored[0] <= '9' || stored[0] == codec.CompressedTag) {
			r.fail(fmt.Sprintf("%s: a plaintext value that is not a stored form", place()), c)
			return "", false
		}
		plain = stored
	}
	out, err := codec.SealValue(ctx, r.ring, aad(), plain)
	if err != nil {
		r.fail(fmt.Sprintf("%s: %v", place(), err), c)
		return "", false
	}
	return out, true
}

// fail records a value that cannot be rekeyed.
func (r *rekeyer) fail(msg string, c *rekeyCounts) {
	c.Failed++
	if len(r.sum.Failures) < maxFailures {
		r.sum.Failures = append(r.sum.Failures, msg)
	}
}

// replace adds the replacement of field of hash key (holding old) by new to
// the pending call, sending it once full.
func (r *rekeyer) replace(ctx context.Context, c *rekeyCounts, key, field, old, new string) error {
	if r.counts != c && r.n > 0 {
		if err := r.flush(ctx); err != nil {
			return err
		}
	}
	r.counts = c
	if r.keyAt == nil {
		r.keyAt = map[string]int{}
	}
	at, ok := r.keyAt[key]
	if !ok {
		r.keys = append(r.keys, key)
		at = len(r.keys)
		r.keyAt[key] = at
	}
	r.args = append(r.args, at, field, old, new)
	r.n++
	r.bytes += len(old) + len(new)
	if r.n >= r.batch || r.bytes >= rekeyBytes {
		return r.flush(ctx)
	}
	return nil
}

// flush sends the pending call (rekey.lua), and counts what it did.
func (r *rekeyer) flush(ctx context.Context) error {
	defer r.report()
	if r.n == 0 {
		return nil
	}
	c := r.counts
	args := append([]any{r.n}, r.args...)
	n, keys := r.n, r.keys
	r.keys, r.keyAt, r.args, r.n, r.bytes = nil, nil, nil, 0, 0
	if r.dry {
		c.Rekeyed += n
		return nil
	}
	if r.sum.Calls > 0 && r.pause > 0 {
		select {
		case <-time.After(r.pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if beforeRekeyCall != nil {
		beforeRekeyCall(keys, args)
	}
	res, err := scriptrun.Run(ctx, r.rdb, scriptrun.Rekey, keys, args...).Int64Slice()
	if err != nil {
		return err
	}
	r.sum.Calls++
	if len(res) != 3 {
		return fmt.Errorf("rekey script replied %v", res)
	}
	c.Rekeyed += int(res[0])
	c.Changed += int(res[1])
	c.Gone += int(res[2])
	return nil
}

// report prints progress to standard error, every --progress.
func (r *rekeyer) report() {
	if r.progress <= 0 || time.Since(r.lastProgress) < r.progress {
		return
	}
	r.lastProgress = time.Now()
	s := &r.sum
	fmt.Fprintf(r.stderr, "rekey: %d threads, %d values, %d writes, %d items read; %d rekeyed; %v\n",
		s.Threads, s.Values.Read, s.Writes.Read, s.Items.Read, s.Values.Rekeyed+s.Writes.Rekeyed+s.Items.Rekeyed,
		time.Since(r.started).Round(time.Second))
}
