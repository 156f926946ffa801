// Command memory shows the long-term memory store, redisstore: two threads
// (conversations) of one user share memories. In the first thread the user
// tells the agent a few things, which the agent stores as memories in the
// user's namespace; in the second, a new conversation, the agent recalls
// them: a filtered search (the user's preferences, newest first) and a
// semantic search (the memories closest to the user's question). Each
// thread's messages are checkpointed with redissaver; the memories outlive
// both threads.
//
// It uses the Redis named by REDIS_URL (e.g. redis://127.0.0.1:6379/15) or,
// when that is unset, an embedded miniredis. Its keys live under prefixes
// of their own, and it deletes what it stored before it exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/examples/internal/demo"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/redisstore/embed"
	"github.com/redis/go-redis/v9"
)

const userID = "user-42"

// memoriesNS is the user's namespace: every thread of the user reads and
// writes it.
var memoriesNS = []string{"users", userID, "memories"}

func main() { demo.Main("memory", run) }

func run(ctx context.Context, rdb *redis.Client) (err error) {

	run := checkpoint.NewID()
	saver, err := redissaver.New(context.Background(), rdb, redissaver.Options{AcceptEviction: demo.Embedded(), Prefix: "memory-demo:" + run})
	if err != nil {
		return err
	}
	// A deterministic, local embedder: it matches shared words and word
	// pieces. A real deployment plugs an embedding model in instead.
	emb, err := embed.NewHashing(384)
	if err != nil {
		return err
	}
	store, err := redisstore.New(context.Background(), rdb, redisstore.Options{
		Prefix:   "memory-demo:store:" + run,
		Embedder: emb,
		Dims:     emb.Dims(),
		Fields:   []string{"text"},
		TTL:      30 * 24 * time.Hour, // memories fade after a month without use...
		// ...unless they are recalled: reads extend their TTL.
		RefreshOnRead: redisstore.RefreshOn,
	})
	if err != nil {
		return err
	}
	a := &agent{saver: saver, store: store}
	defer func() {
		if cerr := a.cleanup(context.Background()); cerr != nil && err == nil {
			err = cerr
		}
	}()

	fmt.Println("\n== thread-1: the user talks about themselves")
	for _, msg := range []string{
		"Hi! I'm vegetarian, so no meat in recipes please.",
		"I live in Lyon and I cycle to work.",
		"I prefer short answers, in metric units.",
		"My sister Claire is allergic to peanuts.",
	} {
		if err := a.turn(ctx, "thread-1", msg); err != nil {
			return err
		}
	}

	fmt.Println("\n== thread-2: a new conversation, the same user")
	return a.recall(ctx, "thread-2", "Can you suggest a dinner recipe for my sister and me?")
}

type agent struct {
	saver   *redissaver.Saver
	store   *redisstore.Store
	threads []string
}

// turn checkpoints the user's message in its thread and stores what it
// teaches about the user as a memory, shared by every thread.
func (a *agent) turn(ctx context.Context, thread, msg string) error {
	fmt.Printf("user> %s\n", msg)
	if err := a.checkpoint(ctx, thread, msg); err != nil {
		return err
	}
	m := extract(msg)
	key := m.kind + "-" + checkpoint.NewID()
	if err := a.store.Put(ctx, memoriesNS, key, map[string]any{
		"text": m.text, "kind": m.kind, "thread": thread,
	}); err != nil {
		return err
	}
	fmt.Printf("  stored memory %-12s %q\n", "("+m.kind+")", m.text)
	return nil
}

// recall answers in a new thread from the memories of the user's earlier
// threads.
func (a *agent) recall(ctx context.Context, thread, question string) error {
	fmt.Printf("user> %s\n", question)
	if err := a.checkpoint(ctx, thread, question); err != nil {
		return err
	}

	// A filtered search: the user's preferences, newest first. The filter
	// runs inside Redis, before the limit.
	prefs, err := a.store.Search(ctx, []string{"users", userID}, redisstore.SearchOptions{
		Filter: map[string]any{"kind": "preference"},
		Limit:  5,
	})
	if err != nil {
		return err
	}
	fmt.Println("  filtered search, kind = preference:")
	for _, it := range prefs {
		fmt.Printf("    - %s (from %s)\n", it.Value["text"], it.Value["thread"])
	}

	// A semantic search: the memories closest to the question, ranked in
	// Redis by exact cosine similarity.
	hits, err := a.store.Search(ctx, []string{"users", userID}, redisstore.SearchOptions{
		Query: "dinner recipe for my sister: food, allergy, vegetarian",
		Limit: 3,
	})
	if err != nil {
		return err
	}
	fmt.Println("  semantic search, \"dinner recipe for my sister: food, allergy, vegetarian\":")
	for _, it := range hits {
		fmt.Printf("    - %.2f %s\n", *it.Score, it.Value["text"])
	}

	var facts []string
	for _, it := range append(prefs, hits...) {
		facts = append(facts, it.Value["text"].(string))
	}
	answer := "Peanut-free chickpea curry for two: 400 g chickpeas, 400 ml coconut milk, 25 minutes."
	if err := a.checkpoint(ctx, thread, "ai: "+answer); err != nil {
		return err
	}
	fmt.Printf("agent> %s\n", answer)
	fmt.Printf("  (built from %d recalled memories)\n", len(dedupe(facts)))

	nss, err := a.store.ListNamespaces(ctx, redisstore.ListNamespacesOptions{Prefix: []string{"users"}})
	if err != nil {
		return err
	}
	fmt.Println("  namespaces under (users):", nss)
	return nil
}

// checkpoint appends msg to the thread's messages, one checkpoint per turn:
// the next checkpoint after the thread's latest (Next bumps the version of
// "messages" and returns it as the new version to write), or its first.
func (a *agent) checkpoint(ctx context.Context, thread, msg string) error {
	prev, parent := checkpoint.Empty(), checkpoint.Root(thread, "")
	tup, err := a.saver.GetTuple(ctx, checkpoint.Config{ThreadID: thread})
	switch {
	case err == nil:
		prev, parent = tup.Checkpoint, checkpoint.Parent(tup.Config)
	case errors.Is(err, checkpoint.ErrNotFound):
		a.threads = append(a.threads, thread) // a new thread
	default:
		return err
	}
	msgs, _ := prev.ChannelValues["messages"].([]any)
	cp, newVersions := checkpoint.Next(prev, map[string]any{"messages": append(slices.Clone(msgs), msg)}, a.saver.NextVersion)
	_, err = a.saver.Put(ctx, parent, cp, checkpoint.Metadata{"source": "loop", "user": userID}, newVersions)
	return err
}

func (a *agent) cleanup(ctx context.Context) error {
	for _, th := range a.threads {
		if err := a.saver.DeleteThread(ctx, th); err != nil {
			return err
		}
	}
	items, err := a.store.Search(ctx, nil, redisstore.SearchOptions{Limit: 1000})
	if err != nil {
		return err
	}
	var ops []redisstore.Op
	for _, it := range items {
		ops = append(ops, redisstore.DeleteOp{Namespace: it.Namespace, Key: it.Key})
	}
	if _, err := a.store.Batch(ctx, ops); err != nil {
		return err
	}
	fmt.Printf("\ncleanup: deleted %d threads and %d memories\n", len(a.threads), len(items))
	return nil
}

type memory struct{ kind, text string }

// extract stands in for the model call that turns a message into a memory.
func extract(msg string) memory {
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "prefer") || strings.Contains(lower, "vegetarian"):
		return memory{"preference", strings.TrimPrefix(msg, "Hi! ")}
	default:
		return memory{"fact", msg}
	}
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
