package checkpointtest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/checkpoint/checkpointtest"
	"github.com/graphstate/redcheck/checkpoint/memsaver"
)

// bareSaver has the methods of checkpoint.Saver only: it hides every
// capability of the saver it wraps.
type bareSaver struct{ checkpoint.Saver }

// childEnv names the kit run TestKitChild performs in a child process.
const childEnv = "CHECKPOINTTEST_CHILD"

// kitRuns are the runs TestKitChild can perform, by name.
var kitRuns = map[string]func(t *testing.T){
	"bare": func(t *testing.T) {
		checkpointtest.RunExtended(t, newBare)
	},
	"bare without all": func(t *testing.T) {
		checkpointtest.RunExtended(t, newBare, checkpointtest.Without(checkpointtest.RunDeleter, checkpointtest.ThreadCopier),
			checkpointtest.Without(checkpointtest.Pruner, checkpointtest.DeltaHistorian))
	},
	"bare without three": func(t *testing.T) {
		checkpointtest.RunExtended(t, newBare, checkpointtest.Without(checkpointtest.RunDeleter, checkpointtest.ThreadCopier, checkpointtest.Pruner))
	},
	"full without one": func(t *testing.T) {
		checkpointtest.Run(t, newFull, checkpointtest.Without(checkpointtest.Pruner))
	},
	"misspelt": func(t *testing.T) {
		checkpointtest.RunExtended(t, newBare, checkpointtest.Without("Prunr"))
	},
	"no pruner": func(t *testing.T) {
		newSaver := newNoPruner
		checkpointtest.Run(t, newSaver, checkpointtest.Without(checkpointtest.Pruner))
	},
	"full": func(t *testing.T) {
		checkpointtest.RunExtended(t, newFull)
	},
}

// noPruner has every method of memsaver but Prune.
type noPruner struct {
	checkpoint.Saver
	checkpoint.RunDeleter
	checkpoint.ThreadCopier
	checkpoint.DeltaHistorian
}

func newNoPruner(t *testing.T) checkpoint.Saver {
	m := memsaver.New(memsaver.Options{})
	return noPruner{m, m, m, m}
}

func newFull(t *testing.T) checkpoint.Saver { return memsaver.New(memsaver.Options{}) }
func newBare(t *testing.T) checkpoint.Saver { return bareSaver{memsaver.New(memsaver.Options{})} }

// TestKitChild performs the run childEnv names; it does nothing when the
// variable is unset (it is the child side of TestMissingCapability).
func TestKitChild(t *testing.T) {
	name := os.Getenv(childEnv)
	if name == "" {
		return
	}
	kitRuns[name](t)
}

// TestMissingCapability runs the kit in a child process and checks that a
// missing capability fails the run unless Without names it, and that
// Without cannot hide a typo or a capability the saver has.
func TestMissingCapability(t *testing.T) {
	tests := []struct {
		run      string
		wantFail bool
		want     []string
		dontWant []string
	}{
		{"bare", true, []string{
			"--- FAIL: TestKitChild/delete_for_runs",
			`does not implement checkpoint.RunDeleter: implement it, or opt out with checkpointtest.Without("RunDeleter")`,
			"--- FAIL: TestKitChild/copy_thread", "--- FAIL: TestKitChild/prune", "--- FAIL: TestKitChild/delta_channel_history",
		}, []string{"--- SKIP"}},
		{"bare without all", false, []string{
			"--- SKIP: TestKitChild/delete_for_runs", "--- SKIP: TestKitChild/delta_channel_history",
			`opted out with Without("Pruner")`,
		}, []string{"--- FAIL"}},
		{"bare without three", true, []string{
			"--- SKIP: TestKitChild/prune", "--- FAIL: TestKitChild/delta_channel_history",
		}, []string{"--- FAIL: TestKitChild/prune"}},
		{"full without one", true, []string{
			`implements checkpoint.Pruner, yet Without("Pruner") opts out of its tests`,
			"--- PASS: TestKitChild/put ", "--- PASS: TestKitChild/delete_for_runs",
		}, []string{"--- SKIP"}},
		{"no pruner", false, []string{
			"--- SKIP: TestKitChild/prune ", "--- PASS: TestKitChild/delta_channel_history ", "--- PASS: TestKitChild/edge ",
		}, []string{"--- FAIL"}},
		{"misspelt", true, []string{`Without("Prunr"): not a capability`}, nil},
		{"full", false, []string{"--- PASS: TestKitChild/delta_channel_history "}, []string{"--- SKIP", "--- FAIL"}},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			cmd := exec.CommandContext(context.Background(), os.Args[0], "-test.run=^TestKitChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+tt.run)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tt.wantFail {
				t.Errorf("child failed: %v, want %v (err %v)", failed, tt.wantFail, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(string(out), w) {
					t.Errorf("output has %q", w)
				}
			}
			if t.Failed() {
				t.Logf("child output:\n%s", out)
			}
		})
	}
}
