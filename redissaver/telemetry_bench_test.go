package redissaver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/graphstate/redcheck/redissaver"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkSuperStepTelemetry is BenchmarkSuperStep's loop with the no-op
// providers (no SDK installed, the library's default) and with the
// OpenTelemetry SDK: every span sampled, batched to an exporter that drops
// it, and the metrics aggregated by a reader (docs/performance.md,
// "OpenTelemetry"). Compare the pairs of one run (-count interleaves them).
func BenchmarkSuperStepTelemetry(b *testing.B) {
	for _, agents := range []int{1, 64} {
		for _, tel := range []string{"noop", "sdk"} {
			b.Run(fmt.Sprintf("agents=%d/otel=%s", agents, tel), func(b *testing.B) {
				var tp trace.TracerProvider = tracenoop.NewTracerProvider()
				var mp metric.MeterProvider = noop.NewMeterProvider()
				if tel == "sdk" {
					stp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
						sdktrace.WithBatcher(tracetest.NewNoopExporter()))
					smp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
					b.Cleanup(func() {
						_ = stp.Shutdown(context.Background())
						_ = smp.Shutdown(context.Background())
					})
					tp, mp = stp, smp
				}
				s, meter := benchSaver(b, redissaver.Options{TracerProvider: tp, MeterProvider: mp})
				runSuperSteps(b, s, meter, agents)
			})
		}
	}
}
