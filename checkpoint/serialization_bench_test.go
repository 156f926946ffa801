package checkpoint

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkDumpsMessages(b *testing.B) {
	msgs := make([]any, 0, 40)
	for range 40 {
		msgs = append(msgs, map[string]any{"role": "ai", "content": "hello there, how can I help you today? here is a longer line of text.", "id": "abc", "type": "ai"})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, err := (MsgpackSerializer{}).DumpsTyped(msgs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadsMessages(b *testing.B) {
	msgs := make([]any, 0, 40)
	for range 40 {
		msgs = append(msgs, map[string]any{"role": "ai", "content": "hello there, how can I help you today? here is a longer line of text.", "id": "abc", "type": "ai"})
	}
	typ, data, _ := (MsgpackSerializer{}).DumpsTyped(msgs)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := (MsgpackSerializer{}).LoadsTyped(typ, data); err != nil {
			b.Fatal(err)
		}
	}
}

// agentMessages returns n messages shaped like those of the bench's agent
// workload (bench/workload.go): type, id and 200 bytes of content.
func agentMessages(n int) []any {
	msgs := make([]any, n)
	for j := range msgs {
		typ := "human"
		if j%2 == 1 {
			typ = "ai"
		}
		content := strings.Repeat(fmt.Sprintf("word%d ", j%10), 40)[:200]
		msgs[j] = map[string]any{"type": typ, "id": fmt.Sprintf("msg-%06d", j), "content": content}
	}
	return msgs
}

// BenchmarkDumpsAgentMessages encodes the agent workload's message list of
// 100 messages and one of its other channel values, with DumpsTyped (the
// fast path) and with the reflecting reference encoder it replaces.
func BenchmarkDumpsAgentMessages(b *testing.B) {
	values := map[string]any{
		"messages100": agentMessages(100),
		"channel":     map[string]any{"channel": "plan", "rev": int64(7), "data": strings.Repeat("x", 256)},
	}
	encoders := []struct {
		name   string
		encode func(any) ([]byte, error)
	}{
		{"DumpsTyped", func(v any) ([]byte, error) {
			_, data, err := MsgpackSerializer{}.DumpsTyped(v)
			return data, err
		}},
		{"reflect", encodeMsgpackReflect},
	}
	for _, name := range []string{"messages100", "channel"} {
		v := values[name]
		for _, enc := range encoders {
			b.Run(name+"/"+enc.name, func(b *testing.B) {
				data, err := enc.encode(v)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := enc.encode(v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
