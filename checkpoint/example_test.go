package checkpoint_test

import (
	"fmt"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

func ExampleNextVersion() {
	a := checkpoint.NextVersion("") // e.g. "000000000001.9f86d081"
	b := checkpoint.NextVersion(a)
	c := checkpoint.NextVersion(b)
	fmt.Println("a < b:", a < b, " b < c:", b < c)

	// The integer part counts; the 8 hex digits after "." are random, so
	// two forks that both take the version after b do not collide.
	counter, _, _ := strings.Cut(c, ".")
	fmt.Println("counter of c:", counter)
	fork := checkpoint.NextVersion(b)
	fmt.Println("fork has c's counter:", strings.HasPrefix(fork, counter+"."), " fork > b:", fork > b)

	// LangGraph's 32-digit versions keep their width.
	lg := "00000000000000000000000000000005.0.123"
	next := checkpoint.NextVersion(lg)
	lgCounter, _, _ := strings.Cut(next, ".")
	fmt.Println("after LangGraph's:", lgCounter, next > lg)
	// Output:
	// a < b: true  b < c: true
	// counter of c: 000000000003
	// fork has c's counter: true  fork > b: true
	// after LangGraph's: 00000000000000000000000000000006 true
}

func ExampleWriteIndex() {
	writes := []checkpoint.Write{
		{Channel: "messages", Value: "hi"},
		{Channel: "step", Value: 1},
		{Channel: checkpoint.ErrorChannel, Value: "boom"},
		{Channel: checkpoint.ScheduledChannel, Value: nil},
		{Channel: checkpoint.InterruptChannel, Value: "approve?"},
		{Channel: checkpoint.ResumeChannel, Value: "yes"},
	}
	for pos, w := range writes {
		fmt.Printf("%-13s at %d -> index %d\n", w.Channel, pos, checkpoint.WriteIndex(w.Channel, pos))
	}
	// Output:
	// messages      at 0 -> index 0
	// step          at 1 -> index 1
	// __error__     at 2 -> index -1
	// __scheduled__ at 3 -> index -2
	// __interrupt__ at 4 -> index -3
	// __resume__    at 5 -> index -4
}

func ExampleMetadata_Matches() {
	md := checkpoint.Metadata{
		"source":  "loop",
		"step":    int64(3),
		"parents": map[string]any{"": "1EF4F797"},
		"tags":    []any{"a", "b"},
	}
	filters := []checkpoint.Metadata{
		{"source": "loop", "step": 3.0},             // numbers compare by value
		{"source": "input"},                         // a different value
		{"parents": map[string]any{"": "1EF4F797"}}, // objects by deep equality
		{"tags": []any{"b", "a"}},                   // arrays in order
		{"run_id": nil},                             // nil matches a missing key
		{"run_id": "run-1"},                         // a missing key matches nothing else
		{},                                          // an empty filter matches all
	}
	for _, f := range filters {
		ok, err := md.Matches(f)
		fmt.Println(ok, err)
	}
	// Output:
	// true <nil>
	// false <nil>
	// true <nil>
	// false <nil>
	// true <nil>
	// false <nil>
	// true <nil>
}
