package eino_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/graphstate/redcheck/adapters/eino"
	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/redissaver"
)

// refund is the argument of the refund tool, and the state it keeps in
// eino's checkpoint while a human decides (gob, registered).
type refund struct {
	Order  string `json:"order"`
	Amount int    `json:"amount"`
}

func init() { schema.RegisterName[refund]("redcheck_eino_test_refund") }

// scriptedModel is a chat model without network: to a user asking for a
// refund of an order it answers with a call of the refund tool; to a tool
// result it answers with its final message. It decides from the messages
// alone, so a new instance in a resuming process answers as the first
// would. calls counts its Generate calls.
type scriptedModel struct{ calls *atomic.Int32 }

var orderRE = regexp.MustCompile(`order (\S+) of (\d+)`)

func (m scriptedModel) Generate(_ context.Context, msgs []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.calls.Add(1)
	last := msgs[len(msgs)-1]
	if last.Role == schema.Tool {
		return schema.AssistantMessage("Done: "+last.Content, nil), nil
	}
	sub := orderRE.FindStringSubmatch(last.Content)
	if sub == nil {
		return schema.AssistantMessage("Which order?", nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID:       "call-" + sub[1],
		Type:     "function",
		Function: schema.FunctionCall{Name: "issue_refund", Arguments: fmt.Sprintf(`{"order":%q,"amount":%s}`, sub[1], sub[2])},
	}}), nil
}

func (m scriptedModel) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

// agentProcess is one process's ADK runner on the store: a new chat
// model, tool, agent and runner.
type agentProcess struct {
	runner      *adk.Runner
	modelCalls  *atomic.Int32
	refundCalls *atomic.Int32
}

func newAgentProcess(t testing.TB, store adk.CheckPointStore) *agentProcess {
	t.Helper()
	ctx := context.Background()
	p := &agentProcess{modelCalls: new(atomic.Int32), refundCalls: new(atomic.Int32)}
	refundTool, err := utils.InferTool("issue_refund", "Refund an order; a human approves it first.",
		func(ctx context.Context, r refund) (string, error) {
			p.refundCalls.Add(1)
			wasInterrupted, hasState, asked := tool.GetInterruptState[refund](ctx)
			if !wasInterrupted {
				return "", tool.StatefulInterrupt(ctx, fmt.Sprintf("approve a refund of %d for order %s?", r.Amount, r.Order), r)
			}
			isTarget, hasData, decision := tool.GetResumeContext[string](ctx)
			if !hasState || !isTarget || !hasData {
				return "", tool.StatefulInterrupt(ctx, "still waiting for approval", asked)
			}
			return fmt.Sprintf("refund of %d for order %s %s", asked.Amount, asked.Order, decision), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "refunds",
		Description: "refunds orders once a human approves",
		Instruction: "You refund orders.",
		Model:       scriptedModel{calls: p.modelCalls},
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{refundTool}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.runner = adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: store})
	return p
}

// outcome is what the events of one run or resume say.
type outcome struct {
	interrupt string // the root-cause interrupt's ID, if it interrupted
	final     string // the agent's last assistant message
	err       error  // the first error event
}

func drain(it *adk.AsyncIterator[*adk.AgentEvent]) outcome {
	var o outcome
	for {
		ev, ok := it.Next()
		if !ok {
			return o
		}
		if ev.Err != nil && o.err == nil {
			o.err = ev.Err
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				if c.IsRootCause {
					o.interrupt = c.ID
				}
			}
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Role == schema.Assistant {
			if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil && msg.Content != "" {
				o.final = msg.Content
			}
		}
	}
}

// TestADKInterruptRestartResume: an ADK agent (a chat model agent with a
// scripted model) calls a tool that interrupts for a human's approval; the
// Runner saves the run to Redis through the store. A new process (new
// client, saver, store, model, agent and runner) resumes it with the
// human's decision: the tool gets its saved arguments back, the run
// completes, and the model is not asked again for the tool call. Delete
// then leaves no key.
func TestADKInterruptRestartResume(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		sopts := redissaver.Options{Prefix: p}
		const id = "refund-A-17"

		st1 := newStore(t, tr, sopts, eino.Options{PruneEvery: 1})
		p1 := newAgentProcess(t, st1)
		o := drain(p1.runner.Query(ctx, "please refund order A-17 of 42", adk.WithCheckPointID(id)))
		if o.err != nil || o.interrupt == "" || o.final != "" {
			t.Fatalf("first run: %+v, want an interrupt", o)
		}
		if _, ok, err := st1.Get(ctx, id); !ok || err != nil {
			t.Fatalf("no checkpoint after the interrupt: %v %v", ok, err)
		}

		st2 := newStore(t, tr, sopts, eino.Options{PruneEvery: 1})
		p2 := newAgentProcess(t, st2)
		it, err := p2.runner.ResumeWithParams(ctx, id, &adk.ResumeParams{Targets: map[string]any{o.interrupt: "approved by alice"}})
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		o2 := drain(it)
		if o2.err != nil || o2.interrupt != "" {
			t.Fatalf("resume: %+v", o2)
		}
		if want := "Done: refund of 42 for order A-17 approved by alice"; o2.final != want {
			t.Errorf("final message %q, want %q", o2.final, want)
		}
		if m, r := p2.modelCalls.Load(), p2.refundCalls.Load(); m != 1 || r != 1 {
			t.Errorf("resuming process: %d model calls, %d tool calls; want 1 and 1", m, r)
		}
		if err := st2.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		if left := tr.dataKeys(t, p); len(left) != 0 {
			t.Errorf("keys left after Delete: %v", left)
		}
		// A resume of the deleted ID is eino's "not exist", not a new run.
		if _, err := newAgentProcess(t, st1).runner.Resume(ctx, id); err == nil || !strings.Contains(err.Error(), "not exist") {
			t.Errorf("resume after Delete: %v", err)
		}
	})
}

// TestADKConcurrentRuns: 6 runs with distinct checkpoint IDs on one store
// interrupt concurrently; another process resumes them concurrently, each
// with its own decision: each ends with its own order and decision.
//
// Each run has an agent and runner of its own: in eino v0.7.36 a
// ChatModelAgent with tools compiles its shared ReAct graph again on every
// run, writing to it without synchronization (compose graphNode.cr), so
// one agent instance cannot serve concurrent runs without a data race.
// The store, which is what this test is about, is shared.
func TestADKConcurrentRuns(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		sopts := redissaver.Options{Prefix: prefix(t)}
		const runs = 6
		interrupts := make([]string, runs)
		finals := make([]string, runs)
		errs := make([]error, runs)
		// agents returns one agent process per run, all on one new store
		// (one application process).
		agents := func() []*agentProcess {
			st := newStore(t, tr, sopts, eino.Options{})
			ps := make([]*agentProcess, runs)
			for i := range ps {
				ps[i] = newAgentProcess(t, st)
			}
			return ps
		}
		parallel := func(f func(i int)) {
			var wg sync.WaitGroup
			for i := range runs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					f(i)
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		}
		ps := agents()
		parallel(func(i int) {
			o := drain(ps[i].runner.Query(ctx, fmt.Sprintf("refund order B-%d of %d", i, 10+i), adk.WithCheckPointID(fmt.Sprint("run-", i))))
			if interrupts[i] = o.interrupt; o.err != nil || o.interrupt == "" {
				errs[i] = fmt.Errorf("run %d: %+v", i, o)
			}
		})
		ps = agents()
		parallel(func(i int) {
			it, err := ps[i].runner.ResumeWithParams(ctx, fmt.Sprint("run-", i), &adk.ResumeParams{Targets: map[string]any{interrupts[i]: fmt.Sprint("approved by agent ", i)}})
			if err != nil {
				errs[i] = err
				return
			}
			o := drain(it)
			if finals[i] = o.final; o.err != nil {
				errs[i] = o.err
			}
		})
		for i, f := range finals {
			if want := fmt.Sprintf("Done: refund of %d for order B-%d approved by agent %d", 10+i, i, i); f != want {
				t.Errorf("run %d: %q, want %q", i, f, want)
			}
		}
	})
}

// TestADKLostKey: the Runner's Resume of a run whose checkpoint lost its
// values in Redis fails with checkpoint.ErrDataLoss; the tool and the
// model are not run again.
func TestADKLostKey(t *testing.T) {
	tiers(t, func(t *testing.T, tr tier) {
		ctx := context.Background()
		p := prefix(t)
		sopts := redissaver.Options{Prefix: p}
		const id = "refund-lost"
		o := drain(newAgentProcess(t, newStore(t, tr, sopts, eino.Options{})).runner.Query(ctx, "refund order C-1 of 5", adk.WithCheckPointID(id)))
		if o.interrupt == "" {
			t.Fatalf("first run: %+v", o)
		}
		var lost []string
		for _, k := range tr.keysUnder(t, p) {
			if strings.HasSuffix(k, ":blobs") {
				lost = append(lost, k)
			}
		}
		if len(lost) != 1 {
			t.Fatalf("values hashes: %v", lost)
		}
		if err := tr.client(t).Del(ctx, lost...).Err(); err != nil {
			t.Fatal(err)
		}
		p2 := newAgentProcess(t, newStore(t, tr, sopts, eino.Options{}))
		_, err := p2.runner.ResumeWithParams(ctx, id, &adk.ResumeParams{Targets: map[string]any{o.interrupt: "approved"}})
		if !errors.Is(err, checkpoint.ErrDataLoss) {
			t.Errorf("resume after the loss: %v, want ErrDataLoss", err)
		}
		if m, r := p2.modelCalls.Load(), p2.refundCalls.Load(); m != 0 || r != 0 {
			t.Errorf("after the loss: %d model calls, %d tool calls", m, r)
		}
	})
}
