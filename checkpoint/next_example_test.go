package checkpoint_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
)

// counter is the integer part of a version made by NextVersion.
func counter(version string) string {
	c, _, _ := strings.Cut(version, ".")
	return strings.TrimLeft(c, "0")
}

// Two super-steps of a graph: Next builds each checkpoint from the one
// before, Root and Parent say what Put's Config means.
func ExampleNext() {
	ctx := context.Background()
	saver := memsaver.New(memsaver.Options{})

	// Step -1: the input. The first checkpoint of a thread has no parent.
	cp, newVersions := checkpoint.Next(checkpoint.Empty(), map[string]any{
		"messages": []any{"hi"},
		"config":   map[string]any{"model": "demo"},
	}, saver.NextVersion)
	stored, err := saver.Put(ctx, checkpoint.Root("user-42", ""), cp, checkpoint.Metadata{"source": "input", "step": -1}, newVersions)
	if err != nil {
		fmt.Println(err)
		return
	}

	// Step 0: only "messages" changes, so only it gets a new version and
	// only its value is written; "config" keeps its version.
	cp, newVersions = checkpoint.Next(cp, map[string]any{"messages": []any{"hi", "hello!"}}, saver.NextVersion)
	stored, err = saver.Put(ctx, checkpoint.Parent(stored), cp, checkpoint.Metadata{"source": "loop", "step": 0}, newVersions)
	if err != nil {
		fmt.Println(err)
		return
	}

	latest, err := saver.GetTuple(ctx, checkpoint.Config{ThreadID: "user-42"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("latest is step 0:", latest.Config == stored)
	fmt.Println("updated:", latest.Checkpoint.UpdatedChannels, "new versions:", len(newVersions))
	fmt.Println("messages version", counter(latest.Checkpoint.ChannelVersions["messages"]), "=", latest.Checkpoint.ChannelValues["messages"])
	fmt.Println("config version", counter(latest.Checkpoint.ChannelVersions["config"]), "=", latest.Checkpoint.ChannelValues["config"])
	fmt.Println("parent is step -1:", latest.ParentConfig.CheckpointID < latest.Config.CheckpointID)
	// Output:
	// latest is step 0: true
	// updated: [messages] new versions: 1
	// messages version 2 = [hi hello!]
	// config version 1 = map[model:demo]
	// parent is step -1: true
}

func ExampleEmpty() {
	cp := checkpoint.Empty()
	fmt.Println(cp.V, len(cp.ID), len(cp.ChannelValues), len(cp.ChannelVersions), cp.TS != "")
	// Output: 4 26 0 0 true
}
