package tracectx

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

func TestRoundTrip(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	state, err := trace.ParseTraceState("vendor=abc,other=x1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		sc   trace.SpanContext
		want []string
	}{
		{"none", trace.SpanContext{}, nil},
		{"sampled", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			[]string{FieldParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		{"unsampled with state", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceState: state}),
			[]string{FieldParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", FieldState, "vendor=abc,other=x1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Fields(trace.ContextWithSpanContext(context.Background(), c.sc))
			if len(got) != len(c.want) {
				t.Fatalf("Fields = %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("Fields = %q, want %q", got, c.want)
				}
			}
			if c.want == nil {
				return
			}
			var ts string
			if len(got) == 4 {
				ts = got[3]
			}
			back := SpanContext(got[1], ts)
			if !back.IsRemote() || !back.Equal(c.sc.WithRemote(true)) {
				t.Fatalf("SpanContext = %+v, want %+v", back, c.sc)
			}
		})
	}
}

func TestSpanContextRefusesMalformed(t *testing.T) {
	for _, tp := range []string{"", "00-0-0-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "garbage"} {
		if sc := SpanContext(tp, ""); sc.IsValid() {
			t.Errorf("SpanContext(%q) is valid: %+v", tp, sc)
		}
	}
}
