package redissaver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/internal/codec"
	"github.com/graphstate/redcheck/internal/keys"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/stream"
	"github.com/redis/go-redis/v9"
)

// secret is in every value the encryption tests write: it must never show
// in Redis, nor in an error.
const secret = "SECRET-PAYLOAD-7f3a"

func ring(t testing.TB, current string, ids ...string) *checkpoint.Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for _, id := range append([]string{current}, ids...) {
		keys[id] = bytes.Repeat([]byte{0x5a, id[len(id)-1]}, checkpoint.KeySize/2) // a key of its id only
	}
	r, err := checkpoint.NewKeyring(current, keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tiers runs f on miniredis and on a real Redis.
func tiers(t *testing.T, f func(t *testing.T, rdb *redis.Client)) {
	for _, tr := range []struct {
		name   string
		client func(t *testing.T) *redis.Client
	}{
		{"miniredis", func(t *testing.T) *redis.Client { _, c := redistest.Mini(t); return c }},
		{"redis", func(t *testing.T) *redis.Client { return redistest.Real(t) }},
	} {
		t.Run(tr.name, func(t *testing.T) { f(t, tr.client(t)) })
	}
}

func encSaver(t *testing.T, rdb redis.UniversalClient, prefix string, r *checkpoint.Keyring, readPlain bool) *redissaver.Saver {
	t.Helper()
	s, err := redissaver.New(context.Background(), rdb, redissaver.Options{Prefix: prefix, AcceptEviction: true,
		Encryption: r, ReadPlaintext: readPlain, Compression: redissaver.Compression{Enabled: true},
		Events: redissaver.Events{IncludeValues: true}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// putSteps writes n checkpoints to thread (channels "msg", a delta channel
// "delta" seeded at the first step, and "big", compressible) with a
// PutWrites after each: regular writes, one to "delta", and an error.
func putSteps(t *testing.T, s *redissaver.Saver, thread string, n int, run string) []checkpoint.Config {
	t.Helper()
	ctx := context.Background()
	var cfgs []checkpoint.Config
	cp := checkpoint.Empty()
	var cfg checkpoint.Config
	for i := 0; i < n; i++ {
		changed := map[string]any{"msg": []any{secret, i, []byte{0, 0xff, byte(i)}}, "big": strings.Repeat(secret+" ", 300)}
		if i == 0 {
			changed["delta"] = checkpoint.DeltaSnapshot{Value: []any{secret}}
		}
		next, nv := checkpoint.Next(cp, changed, s.NextVersion)
		cp = next
		if i > 0 { // a delta channel: a new version without a value (the empty marker)
			nv["delta"] = s.NextVersion(cp.ChannelVersions["delta"])
			cp.ChannelVersions["delta"] = nv["delta"]
			delete(cp.ChannelValues, "delta")
		}
		md := checkpoint.Metadata{"step": i, "source": "loop"}
		if run != "" {
			md["run_id"] = run
		}
		var err error
		if i == 0 {
			cfg, err = s.Put(ctx, checkpoint.Root(thread, ""), cp, md, nv)
		} else {
			cfg, err = s.Put(ctx, checkpoint.Parent(cfg), cp, md, nv)
		}
		if err != nil {
			t.Fatal(err)
		}
		writes := []checkpoint.Write{{Channel: "msg", Value: secret + " write"}, {Channel: "delta", Value: secret + " d"},
			{Channel: checkpoint.ErrorChannel, Value: secret + " boom"}}
		if err := s.PutWrites(ctx, cfg, writes, "task-1", "path"); err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, cfg)
	}
	return cfgs
}

// rawAll returns every hash field and stream entry value under prefix.
func rawAll(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	ks, err := rdb.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ks {
		switch rdb.Type(ctx, k).Val() {
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				out = append(out, f, v)
			}
		case "stream":
			for _, m := range rdb.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					out = append(out, f, v.(string))
				}
			}
		}
	}
	return out
}

// TestEncryptionRoundTrips: every operation with encryption on reads back
// what it wrote, and nothing of a value is in Redis in the clear.
func TestEncryptionRoundTrips(t *testing.T) {
	tiers(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		prefix := redistest.Prefix(t)
		r := ring(t, "k1")
		s := encSaver(t, rdb, prefix, r, false)
		cfgs := putSteps(t, s, "enc", 4, "run-a")
		putSteps(t, s, "other", 2, "run-b")
		for _, v := range rawAll(t, rdb, prefix) {
			if strings.Contains(v, secret) {
				t.Fatalf("a value is in Redis in the clear: %.60q", v)
			}
		}
		last := cfgs[len(cfgs)-1]
		tup, err := s.GetTuple(ctx, last)
		if err != nil {
			t.Fatal(err)
		}
		if got := tup.Checkpoint.ChannelValues["msg"].([]any); got[0] != secret || len(tup.PendingWrites) != 3 ||
			tup.PendingWrites[0] != (checkpoint.PendingWrite{TaskID: "task-1", Channel: checkpoint.ErrorChannel, Value: secret + " boom"}) {
			t.Fatalf("GetTuple = %v, %+v", tup.Checkpoint.ChannelValues["msg"], tup.PendingWrites)
		}
		n := 0
		for lt, err := range s.List(ctx, checkpoint.ListQuery{}) { // every thread: the merged listing
			if err != nil {
				t.Fatal(err)
			}
			if lt.Checkpoint.ChannelValues["big"] != strings.Repeat(secret+" ", 300) {
				t.Fatalf("List: %v", lt.Config)
			}
			n++
		}
		if n != 6 {
			t.Fatalf("List: %d checkpoints", n)
		}
		h, err := s.DeltaChannelHistory(ctx, last, []string{"delta"})
		if err != nil {
			t.Fatal(err)
		}
		if d := h["delta"]; !d.HasSeed || !reflect.DeepEqual(d.Seed, checkpoint.DeltaSnapshot{Value: []any{secret}}) || len(d.Writes) != 3 {
			t.Fatalf("DeltaChannelHistory = %+v", d)
		}

		// A copy opens each value and seals it for its target.
		if err := s.CopyThread(ctx, "enc", "copy"); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "copy", CheckpointID: last.CheckpointID})
		if err != nil || !reflect.DeepEqual(got.Checkpoint.ChannelValues, tup.Checkpoint.ChannelValues) || !reflect.DeepEqual(got.PendingWrites, tup.PendingWrites) {
			t.Fatalf("the copy reads %+v, %v", got, err)
		}
		if h, err := s.DeltaChannelHistory(ctx, checkpoint.Config{ThreadID: "copy", CheckpointID: last.CheckpointID}, []string{"delta"}); err != nil || len(h["delta"].Writes) != 3 {
			t.Fatalf("the copy's delta history: %+v, %v", h, err)
		}

		// Events carry the ciphertexts; a subscriber with the keyring reads them.
		sub, err := stream.New(rdb, stream.Options{Prefix: prefix, Encryption: r})
		if err != nil {
			t.Fatal(err)
		}
		plainSub, err := stream.New(rdb, stream.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		var cps, writes int
		for _, m := range rdb.XRange(ctx, keys.Of(s).Events("enc"), "-", "+").Val() {
			ev, err := sub.DecodeEvent(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case stream.TypeCheckpoint:
				if got := ev.Values["msg"].([]any); got[0] != secret {
					t.Fatalf("checkpoint event values %+v", ev.Values)
				}
				cps++
			case stream.TypeWrites:
				if len(ev.Writes) != 3 || ev.Writes[2] != (checkpoint.PendingWrite{TaskID: "task-1", Channel: checkpoint.ErrorChannel, Value: secret + " boom"}) {
					t.Fatalf("writes event %+v", ev.Writes)
				}
				writes++
			}
			if _, err := plainSub.DecodeEvent(ctx, m); ev.Type != stream.TypeCheckpoint && ev.Type != stream.TypeWrites {
				continue
			} else if !errors.Is(err, checkpoint.ErrDecrypt) || !errors.Is(err, stream.ErrMalformedEvent) || strings.Contains(err.Error(), secret) {
				t.Fatalf("an event read without the keyring: %v", err)
			}
		}
		if cps != 4 || writes != 4 {
			t.Fatalf("%d checkpoint events, %d writes events", cps, writes)
		}

		// Prune and DeleteForRuns work on encrypted threads.
		if err := s.Prune(ctx, []string{"enc"}, checkpoint.PruneKeepLatest); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "enc"}); err != nil || got.Config.CheckpointID != last.CheckpointID || got.Checkpoint.ChannelValues["big"] == nil {
			t.Fatalf("after Prune: %+v, %v", got, err)
		}
		if err := s.DeleteForRuns(ctx, []string{"run-b"}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "other"}); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("after DeleteForRuns: %+v, %v", got, err)
		}
		if res, err := s.Verify(ctx, ""); err != nil || len(res.Violations) != 0 || res.Values == 0 {
			t.Fatalf("Verify: %+v, %v", res, err)
		}
	})
}

// storedAt reads the raw value of a blob field or write field of a
// checkpoint of thread (root namespace).
type rawPlace struct {
	rdb    redis.UniversalClient
	layout keys.Layout
}

func (p rawPlace) gen(t *testing.T, thread string) string {
	t.Helper()
	g, err := p.rdb.HGet(context.Background(), p.layout.Head(thread), "g").Result()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (p rawPlace) blobs(t *testing.T, thread string) string {
	return p.layout.Blobs(thread, p.gen(t, thread), "")
}

func (p rawPlace) cp(t *testing.T, thread, id string) string {
	return p.layout.Checkpoint(thread, p.gen(t, thread), "", id)
}

func (p rawPlace) get(t *testing.T, key, field string) string {
	t.Helper()
	v, err := p.rdb.HGet(context.Background(), key, field).Result()
	if err != nil {
		t.Fatalf("HGET %s %q: %v", key, field, err)
	}
	return v
}

func (p rawPlace) set(t *testing.T, key, field, v string) {
	t.Helper()
	if err := p.rdb.HSet(context.Background(), key, field, v).Err(); err != nil {
		t.Fatal(err)
	}
}

// wantDecrypt checks that err is checkpoint.ErrDecrypt and shows no value.
func wantDecrypt(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, checkpoint.ErrDecrypt) {
		t.Fatalf("%s: %v, want ErrDecrypt", what, err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "msgpack") {
		t.Fatalf("%s: the error shows a value: %v", what, err)
	}
}

// TestEncryptionMovedCiphertext: a ciphertext moved by hand to another
// thread, channel, version or write index, or with a bit flipped, fails
// with checkpoint.ErrDecrypt; so does a plaintext value, which the
// migration option reads.
func TestEncryptionMovedCiphertext(t *testing.T) {
	tiers(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		prefix := redistest.Prefix(t)
		r := ring(t, "k1")
		s := encSaver(t, rdb, prefix, r, false)
		a := putSteps(t, s, "a", 2, "")
		b := putSteps(t, s, "b", 1, "")
		raw := rawPlace{rdb, keys.Of(s)}
		tupA, err := s.GetTuple(ctx, a[1])
		if err != nil {
			t.Fatal(err)
		}
		tupB, err := s.GetTuple(ctx, b[0])
		if err != nil {
			t.Fatal(err)
		}
		blobField := func(tup *checkpoint.Tuple, ch string) string {
			return codec.Pack(ch, "") + tup.Checkpoint.ChannelVersions[ch]
		}
		type edit struct {
			name string
			do   func(t *testing.T) (restore func())
			read checkpoint.Config
		}
		swap := func(t *testing.T, key, field, v string) func() {
			old := raw.get(t, key, field)
			raw.set(t, key, field, v)
			return func() { raw.set(t, key, field, old) }
		}
		wf := func(idx int) string { return codec.WriteField("task-1", idx) }
		for _, e := range []edit{
			{"another thread's value", func(t *testing.T) func() {
				return swap(t, raw.blobs(t, "b"), blobField(tupB, "msg"), raw.get(t, raw.blobs(t, "a"), blobField(tupA, "msg")))
			}, b[0]},
			{"another channel's value", func(t *testing.T) func() {
				return swap(t, raw.blobs(t, "a"), blobField(tupA, "msg"), raw.get(t, raw.blobs(t, "a"), blobField(tupA, "big")))
			}, a[1]},
			{"another version's value", func(t *testing.T) func() {
				tup0, _ := s.GetTuple(ctx, a[0])
				return swap(t, raw.blobs(t, "a"), blobField(tupA, "msg"), raw.get(t, raw.blobs(t, "a"), blobField(tup0, "msg")))
			}, a[1]},
			{"another write index", func(t *testing.T) func() {
				key := raw.cp(t, "a", a[1].CheckpointID)
				return swap(t, key, wf(0), raw.get(t, key, wf(1)))
			}, a[1]},
			{"another checkpoint's write", func(t *testing.T) func() {
				return swap(t, raw.cp(t, "a", a[1].CheckpointID), wf(0), raw.get(t, raw.cp(t, "a", a[0].CheckpointID), wf(0)))
			}, a[1]},
			{"another thread's write", func(t *testing.T) func() {
				return swap(t, raw.cp(t, "b", b[0].CheckpointID), wf(0), raw.get(t, raw.cp(t, "a", a[0].CheckpointID), wf(0)))
			}, b[0]},
			{"a flipped bit in a value", func(t *testing.T) func() {
				v := []byte(raw.get(t, raw.blobs(t, "a"), blobField(tupA, "msg")))
				v[len(v)/2] ^= 0x10
				return swap(t, raw.blobs(t, "a"), blobField(tupA, "msg"), string(v))
			}, a[1]},
			{"a flipped bit in a write", func(t *testing.T) func() {
				key := raw.cp(t, "a", a[1].CheckpointID)
				v := []byte(raw.get(t, key, wf(-1)))
				v[len(v)-1] ^= 0x01
				return swap(t, key, wf(-1), string(v))
			}, a[1]},
			{"a plaintext value", func(t *testing.T) func() {
				return swap(t, raw.blobs(t, "a"), blobField(tupA, "msg"), codec.PackValue("json", []byte(`"`+secret+`"`)))
			}, a[1]},
			{"a plaintext write", func(t *testing.T) func() {
				key := raw.cp(t, "a", a[1].CheckpointID)
				return swap(t, key, wf(0), codec.Pack("msg", "path", codec.PackValue("json", []byte(`"`+secret+`"`))))
			}, a[1]},
		} {
			t.Run(e.name, func(t *testing.T) {
				restore := e.do(t)
				defer restore()
				_, err := s.GetTuple(ctx, e.read)
				wantDecrypt(t, "GetTuple", err)
				for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: e.read.ThreadID}) {
					if err != nil {
						wantDecrypt(t, "List", err)
						return
					}
				}
				t.Fatal("List answered")
			})
		}
		// The migration option reads plaintext, and encrypted values still.
		mig := encSaver(t, rdb, prefix, r, true)
		restore := swap(t, raw.blobs(t, "a"), blobField(tupA, "msg"), codec.PackValue("json", []byte(`"plain"`)))
		got, err := mig.GetTuple(ctx, a[1])
		if err != nil || got.Checkpoint.ChannelValues["msg"] != "plain" || got.Checkpoint.ChannelValues["big"] != tupA.Checkpoint.ChannelValues["big"] {
			t.Fatalf("ReadPlaintext: %+v, %v", got, err)
		}
		wantDecrypt(t, "strict after migration", func() error { _, err := s.GetTuple(ctx, a[1]); return err }())
		restore()
		// A saver without a keyring refuses encrypted values.
		off, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, AcceptEviction: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = off.GetTuple(ctx, a[1])
		wantDecrypt(t, "no keyring", err)
		_, err = off.DeltaChannelHistory(ctx, a[1], []string{"delta"})
		wantDecrypt(t, "delta history without keyring", err)
		wantDecrypt(t, "copy without keyring", off.CopyThread(ctx, "a", "a2"))
	})
}

// TestEncryptionRotation: values written under k1 read with the ring
// {k2 current, k1}, which writes under k2; a ring without k1 refuses them.
func TestEncryptionRotation(t *testing.T) {
	tiers(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		prefix := redistest.Prefix(t)
		k1 := ring(t, "k1")
		old := putSteps(t, encSaver(t, rdb, prefix, k1, false), "rot", 1, "")
		both := ring(t, "k2", "k1")
		s2 := encSaver(t, rdb, prefix, both, false)
		cfgs := putSteps(t, s2, "rot2", 1, "")
		raw := rawPlace{rdb, keys.Of(s2)}
		for th, id := range map[string]string{"rot": "k1", "rot2": "k2"} {
			for f, v := range rdb.HGetAll(ctx, raw.blobs(t, th)).Val() {
				if v != "" && f != "#" && !strings.HasPrefix(v, "e\x01\x02"+id) {
					t.Errorf("thread %s: value %q not under %s", th, f, id)
				}
			}
		}
		for _, cfg := range []checkpoint.Config{old[0], cfgs[0]} {
			if got, err := s2.GetTuple(ctx, cfg); err != nil || got.Checkpoint.ChannelValues["msg"].([]any)[0] != secret {
				t.Fatalf("%s: %+v, %v", cfg.ThreadID, got, err)
			}
		}
		k2only := encSaver(t, rdb, prefix, ring(t, "k2"), false)
		if _, err := k2only.GetTuple(ctx, cfgs[0]); err != nil {
			t.Fatal(err)
		}
		_, err := k2only.GetTuple(ctx, old[0])
		wantDecrypt(t, "a ring without k1", err)
		if !strings.Contains(err.Error(), `"k1"`) {
			t.Errorf("the error does not name the key id: %v", err)
		}
	})
}

func TestEncryptionOptions(t *testing.T) {
	_, rdb := redistest.Mini(t)
	_, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: true, ReadPlaintext: true})
	if !errors.Is(err, redissaver.ErrInvalidOptions) {
		t.Fatalf("ReadPlaintext without Encryption: %v", err)
	}
	if _, err := stream.New(rdb, stream.Options{ReadPlaintext: true}); !errors.Is(err, stream.ErrInvalidOptions) {
		t.Fatalf("stream: ReadPlaintext without Encryption: %v", err)
	}
}

func TestConformanceEncryption(t *testing.T) {
	tiers(t, func(t *testing.T, rdb *redis.Client) {
		r := ring(t, "k1")
		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
			return newSaver(t, rdb, redissaver.Options{Encryption: r, Events: redissaver.Events{IncludeValues: true}})
		})
	})
}

// TestEncryptionEarlyWritesAndSubscribe: writes stored before their
// checkpoint (renamed into it by its Put) open at their place; a
// subscription with the keyring yields the decrypted values, and a
// keyring served by a function works as a fixed one.
func TestEncryptionEarlyWritesAndSubscribe(t *testing.T) {
	tiers(t, func(t *testing.T, rdb *redis.Client) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		prefix := redistest.Prefix(t)
		fixed := ring(t, "k1")
		fetched := 0
		r, err := checkpoint.NewKeyringFunc(ctx, "k1", func(ctx context.Context, id string) ([]byte, error) {
			fetched++
			if id != "k1" {
				return nil, fmt.Errorf("no key %q: %w", id, checkpoint.ErrDecrypt)
			}
			return bytes.Repeat([]byte{0x5a, '1'}, checkpoint.KeySize/2), nil // ring's key of "k1", served by a "KMS"
		})
		if err != nil {
			t.Fatal(err)
		}
		s := encSaver(t, rdb, prefix, r, false)
		cp, nv := checkpoint.Next(checkpoint.Empty(), map[string]any{"msg": secret}, s.NextVersion)
		cfg := checkpoint.Config{ThreadID: "early", CheckpointID: cp.ID}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "msg", Value: secret + " early"}}, "t1", "p"); err != nil {
			t.Fatal(err)
		}
		stored, err := s.Put(ctx, checkpoint.Root("early", ""), cp, checkpoint.Metadata{"step": 0}, nv)
		if err != nil {
			t.Fatal(err)
		}
		tup, err := s.GetTuple(ctx, stored)
		if err != nil || len(tup.PendingWrites) != 1 || tup.PendingWrites[0].Value != secret+" early" || tup.Checkpoint.ChannelValues["msg"] != secret {
			t.Fatalf("GetTuple = %+v, %v", tup, err)
		}
		// The fixed ring opens what the fetched one sealed.
		if got, err := encSaver(t, rdb, prefix, fixed, false).GetTuple(ctx, stored); err != nil || got.Checkpoint.ChannelValues["msg"] != secret {
			t.Fatalf("fixed ring: %+v, %v", got, err)
		}
		if fetched != 1 {
			t.Errorf("the key was fetched %d times, want once", fetched)
		}
		sub, err := stream.New(rdb, stream.Options{Prefix: prefix, Encryption: fixed})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[stream.EventType]bool{}
		for ev, err := range sub.Subscribe(ctx, stream.Query{ThreadID: "early", From: stream.FromBeginning}) {
			if err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case stream.TypeWrites:
				if len(ev.Writes) != 1 || ev.Writes[0].Value != secret+" early" {
					t.Fatalf("writes event %+v", ev.Writes)
				}
			case stream.TypeCheckpoint:
				if ev.Values["msg"] != secret {
					t.Fatalf("checkpoint event %+v", ev.Values)
				}
			}
			seen[ev.Type] = true
			if seen[stream.TypeWrites] && seen[stream.TypeCheckpoint] {
				break
			}
		}
	})
}

// TestTelemetryDecrypt: a value that fails to open is error.type decrypt,
// its message withheld from the span (the caller gets it whole).
func TestTelemetryDecrypt(t *testing.T) {
	tiers(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		r := newTelRig(t, rdb, redissaver.Options{Encryption: ring(t, "k1")})
		cfgs := putSteps(t, r.s, "th-dec", 1, "")
		raw := rawPlace{rdb, keys.Of(r.s)}
		key := raw.cp(t, "th-dec", cfgs[0].CheckpointID)
		v := []byte(raw.get(t, key, codec.WriteField("task-1", 0)))
		v[len(v)-1] ^= 1
		raw.set(t, key, codec.WriteField("task-1", 0), string(v))
		r.spans()
		_, err := r.s.GetTuple(ctx, cfgs[0])
		wantDecrypt(t, "GetTuple", err)
		s := only(t, r.spans(), "GetTuple")
		wantAttrs(t, s, map[string]string{"error.type": "decrypt"})
		if s.Status.Description == err.Error() || strings.Contains(s.Status.Description, "task-1") {
			t.Errorf("the span carries the message: %q", s.Status.Description)
		}
	})
}
