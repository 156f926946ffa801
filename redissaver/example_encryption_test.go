package redissaver_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// Encryption at rest: every value is sealed with the keyring's current key
// and bound to its place, so Redis holds no value in the clear, and a value
// moved by hand to another thread is refused with checkpoint.ErrDecrypt.
func ExampleOptions_encryption() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	key := make([]byte, checkpoint.KeySize)
	if _, err := rand.Read(key); err != nil { // in production: from a secret store or a KMS
		log.Fatal(err)
	}
	ring, err := checkpoint.NewKeyring("2026-11", map[string][]byte{"2026-11": key})
	if err != nil {
		log.Fatal(err)
	}
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{AcceptEviction: true, Encryption: ring})
	if err != nil {
		log.Fatal(err)
	}

	put := func(thread string) checkpoint.Config {
		cp, nv := checkpoint.Next(checkpoint.Empty(), map[string]any{"messages": []any{"my card number is ..."}}, saver.NextVersion)
		cfg, err := saver.Put(ctx, checkpoint.Root(thread, ""), cp, checkpoint.Metadata{"step": 0}, nv)
		if err != nil {
			log.Fatal(err)
		}
		return cfg
	}
	alice, bob := put("alice"), put("bob")
	tup, err := saver.GetTuple(ctx, alice)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tup.Checkpoint.ChannelValues["messages"])

	// What Redis holds (docs/storage-format.md): the envelope "e", its
	// version, the key id, then the nonce and the ciphertext.
	blobs := func(th string) string { // the thread's values hash
		return rdb.Keys(ctx, "redcheck:{*}:t:"+th+":g:*:n::blobs").Val()[0]
	}
	field := func(tup *checkpoint.Tuple) string {
		ver := tup.Checkpoint.ChannelVersions["messages"]
		return fmt.Sprintf("%d:%s%s", len("messages"), "messages", ver)
	}
	stored := rdb.HGet(ctx, blobs("alice"), field(tup)).Val()
	fmt.Printf("%q\n", stored[:10])

	// Alice's ciphertext copied by hand over Bob's value does not open there.
	bobTup, err := saver.GetTuple(ctx, bob)
	if err != nil {
		log.Fatal(err)
	}
	rdb.HSet(ctx, blobs("bob"), field(bobTup), stored)
	_, err = saver.GetTuple(ctx, bob)
	fmt.Println(errors.Is(err, checkpoint.ErrDecrypt))
	// Output:
	// [my card number is ...]
	// "e\x01\a2026-11"
	// true
}
