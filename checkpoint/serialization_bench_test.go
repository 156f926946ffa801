package checkpoint

import "testing"

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
