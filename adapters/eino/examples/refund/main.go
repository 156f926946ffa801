// Command refund is an eino ADK agent that asks a human before it refunds
// an order, and keeps its interrupted run in Redis through redcheck's eino
// CheckPointStore, so that another process resumes it.
//
// The agent is a ChatModelAgent with a scripted chat model (no network, no
// API key): asked to refund an order, it calls the issue_refund tool, which
// interrupts for a human's approval. The eino Runner saves the run through
// the store; the first process prints the interrupt and exits. A second
// process, started with -resume, opens its own saver, store and agent,
// resumes the run from Redis with the human's decision, prints the agent's
// answer and deletes the checkpoint ID (the run is done).
//
//	export REDIS_URL=redis://127.0.0.1:6379
//	go run ./examples/refund -id order-1001                      # interrupts
//	go run ./examples/refund -id order-1001 -resume 'ID' -decision approved
//
// Watch it live from another terminal (from adapters/eino; from the
// repository's root, go run ./cmd/redcheck):
//
//	go run github.com/graphstate/redcheck/cmd/redcheck tail --prefix eino-example --thread order-1001
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/graphstate/redcheck/adapters/eino"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "refund:", err)
		os.Exit(1)
	}
}

// run parses args and runs the agent (or resumes it) once.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("refund", flag.ContinueOnError)
	defaultURL := "redis://127.0.0.1:6379"
	if u := os.Getenv("REDIS_URL"); u != "" {
		defaultURL = u
	}
	url := fs.String("url", defaultURL, "Redis URL (default $REDIS_URL when set)")
	prefix := fs.String("prefix", "eino-example", "redcheck key prefix")
	id := fs.String("id", "order-1001", "eino checkpoint ID of the run (a redcheck thread)")
	order := fs.String("order", "1001", "the order to refund")
	amount := fs.Int("amount", 42, "the amount to refund")
	resume := fs.String("resume", "", "resume the run: the interrupt ID the first process printed")
	decision := fs.String("decision", "approved", "with -resume: the human's decision")
	keep := fs.Bool("keep", false, "with -resume: keep the checkpoint ID once the run is done (default: delete it)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	opt, err := redis.ParseURL(*url)
	if err != nil {
		return err
	}
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	rdb := redis.NewClient(opt)
	defer rdb.Close()

	// A lease of a day on each checkpoint ID, compressed values, events on
	// (the default) for redcheck tail; PruneEvery 1 keeps only the latest
	// checkpoint of each ID.
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{
		Prefix:      *prefix,
		TTL:         24 * time.Hour,
		Compression: redissaver.Compression{Enabled: true},
	})
	if err != nil {
		return err
	}
	store, err := eino.New(saver, eino.Options{PruneEvery: 1})
	if err != nil {
		return err
	}
	runner, err := newRunner(ctx, store)
	if err != nil {
		return err
	}

	if *resume == "" {
		query := fmt.Sprintf("please refund order %s of %d", *order, *amount)
		fmt.Fprintf(out, "user: %s\n", query)
		return report(out, *id, runner.Query(ctx, query, adk.WithCheckPointID(*id)))
	}

	fmt.Fprintf(out, "resuming %s from Redis with the decision %q\n", *id, *decision)
	events, err := runner.ResumeWithParams(ctx, *id, &adk.ResumeParams{Targets: map[string]any{*resume: *decision}})
	if err != nil {
		return err
	}
	if err := report(out, *id, events); err != nil {
		return err
	}
	for v, err := range store.History(ctx, *id, 0) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "checkpoint %s: step %d, %d bytes of eino state\n", v.CheckpointID, v.Step, len(v.Data))
	}
	if *keep {
		return nil
	}
	if err := store.Delete(ctx, *id); err != nil {
		return err
	}
	fmt.Fprintf(out, "deleted checkpoint ID %s\n", *id)
	return nil
}

// report prints the events of a run or a resume: the agent's messages, and
// the interrupt with the command that resumes it.
func report(out io.Writer, id string, events *adk.AsyncIterator[*adk.AgentEvent]) error {
	var errs []error
	for {
		ev, ok := events.Next()
		if !ok {
			return errors.Join(errs...)
		}
		if ev.Err != nil {
			errs = append(errs, ev.Err)
			continue
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil && msg.Content != "" {
				fmt.Fprintf(out, "%s: %s\n", msg.Role, msg.Content)
			}
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				if !c.IsRootCause {
					continue
				}
				fmt.Fprintf(out, "interrupted: %v\n", c.Info)
				fmt.Fprintf(out, "interrupt: %s\n", c.ID)
				fmt.Fprintf(out, "saved in Redis as checkpoint ID %s; resume with:\n  go run ./examples/refund -id %s -resume '%s' -decision approved\n", id, id, c.ID)
			}
		}
	}
}

// refundRequest is the refund tool's argument, and the state it keeps in
// the checkpoint while the human decides (registered for eino's gob
// encoding of ADK checkpoints).
type refundRequest struct {
	Order  string `json:"order" jsonschema:"description=the order ID"`
	Amount int    `json:"amount" jsonschema:"description=the amount to refund"`
}

func init() { schema.RegisterName[refundRequest]("redcheck_example_refund_request") }

// newRunner builds the agent and its runner on store.
func newRunner(ctx context.Context, store adk.CheckPointStore) (*adk.Runner, error) {
	refundTool, err := utils.InferTool("issue_refund", "Refund an order. A human approves every refund first.",
		func(ctx context.Context, req refundRequest) (string, error) {
			wasInterrupted, hasState, asked := tool.GetInterruptState[refundRequest](ctx)
			if !wasInterrupted {
				// The first call: stop here and keep the request in the
				// checkpoint until a human decides.
				return "", tool.StatefulInterrupt(ctx, fmt.Sprintf("approve a refund of %d for order %s?", req.Amount, req.Order), req)
			}
			isTarget, hasDecision, decision := tool.GetResumeContext[string](ctx)
			if !hasState || !isTarget || !hasDecision {
				return "", tool.StatefulInterrupt(ctx, "still waiting for a decision", asked)
			}
			if decision != "approved" {
				return fmt.Sprintf("refund of %d for order %s not issued: %s", asked.Amount, asked.Order, decision), nil
			}
			return fmt.Sprintf("refund of %d for order %s issued", asked.Amount, asked.Order), nil
		})
	if err != nil {
		return nil, err
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "refunds",
		Description: "Refunds orders once a human approves.",
		Instruction: "You refund orders with the issue_refund tool.",
		Model:       scriptedModel{},
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{refundTool}}},
	})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: store}), nil
}

// scriptedModel stands in for an LLM: asked to refund an order it calls
// issue_refund; given the tool's result it reports it. It decides from the
// messages alone, as a stateless model API does, so the resuming process's
// instance answers as the first one would.
type scriptedModel struct{}

var refundRE = regexp.MustCompile(`refund order (\S+) of (\d+)`)

func (scriptedModel) Generate(_ context.Context, msgs []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	last := msgs[len(msgs)-1]
	if last.Role == schema.Tool {
		return schema.AssistantMessage("Done: "+last.Content+".", nil), nil
	}
	m := refundRE.FindStringSubmatch(last.Content)
	if m == nil {
		return schema.AssistantMessage("Which order should I refund, and how much?", nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{{
		ID:       "call-" + m[1],
		Type:     "function",
		Function: schema.FunctionCall{Name: "issue_refund", Arguments: fmt.Sprintf(`{"order":%q,"amount":%s}`, m[1], m[2])},
	}}), nil
}

func (s scriptedModel) Stream(ctx context.Context, msgs []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := s.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (s scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return s, nil
}
