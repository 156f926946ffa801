package telemetrycheck

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/graphstate/redcheck/redisstore"
	"github.com/graphstate/redcheck/stream"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// instrument is a metric as registered: its kind and unit, and the
// packages (instrumentation scopes, last element) that register it.
type instrument struct {
	kind, unit string
	packages   []string
}

// recProvider is a MeterProvider that records the instruments created
// through it, and is otherwise a no-op.
type recProvider struct {
	noop.MeterProvider
	mu  sync.Mutex
	got map[string]*instrument
}

func (p *recProvider) Meter(name string, _ ...metric.MeterOption) metric.Meter {
	return recMeter{p: p, scope: name[strings.LastIndexByte(name, '/')+1:]}
}

func (p *recProvider) add(scope, name, kind, unit string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.got[name]
	if in == nil {
		in = &instrument{kind: kind, unit: unit}
		p.got[name] = in
	}
	if in.kind != kind || in.unit != unit {
		in.kind, in.unit = "inconsistent: "+in.kind+"/"+kind, in.unit+"/"+unit
	}
	if !slices.Contains(in.packages, scope) {
		in.packages = append(in.packages, scope)
		slices.Sort(in.packages)
	}
}

// recMeter records each instrument it creates, then creates a no-op one.
type recMeter struct {
	noop.Meter
	p     *recProvider
	scope string
}

func (m recMeter) Int64Counter(n string, o ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	m.p.add(m.scope, n, "counter", metric.NewInt64CounterConfig(o...).Unit())
	return m.Meter.Int64Counter(n, o...)
}

func (m recMeter) Int64UpDownCounter(n string, o ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	m.p.add(m.scope, n, "updowncounter", metric.NewInt64UpDownCounterConfig(o...).Unit())
	return m.Meter.Int64UpDownCounter(n, o...)
}

func (m recMeter) Int64Histogram(n string, o ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	m.p.add(m.scope, n, "histogram", metric.NewInt64HistogramConfig(o...).Unit())
	return m.Meter.Int64Histogram(n, o...)
}

func (m recMeter) Int64Gauge(n string, o ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	m.p.add(m.scope, n, "gauge", metric.NewInt64GaugeConfig(o...).Unit())
	return m.Meter.Int64Gauge(n, o...)
}

func (m recMeter) Int64ObservableCounter(n string, o ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	m.p.add(m.scope, n, "counter", metric.NewInt64ObservableCounterConfig(o...).Unit())
	return m.Meter.Int64ObservableCounter(n, o...)
}

func (m recMeter) Int64ObservableUpDownCounter(n string, o ...metric.Int64ObservableUpDownCounterOption) (metric.Int64ObservableUpDownCounter, error) {
	m.p.add(m.scope, n, "updowncounter", metric.NewInt64ObservableUpDownCounterConfig(o...).Unit())
	return m.Meter.Int64ObservableUpDownCounter(n, o...)
}

func (m recMeter) Int64ObservableGauge(n string, o ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	m.p.add(m.scope, n, "gauge", metric.NewInt64ObservableGaugeConfig(o...).Unit())
	return m.Meter.Int64ObservableGauge(n, o...)
}

func (m recMeter) Float64Counter(n string, o ...metric.Float64CounterOption) (metric.Float64Counter, error) {
	m.p.add(m.scope, n, "counter", metric.NewFloat64CounterConfig(o...).Unit())
	return m.Meter.Float64Counter(n, o...)
}

func (m recMeter) Float64UpDownCounter(n string, o ...metric.Float64UpDownCounterOption) (metric.Float64UpDownCounter, error) {
	m.p.add(m.scope, n, "updowncounter", metric.NewFloat64UpDownCounterConfig(o...).Unit())
	return m.Meter.Float64UpDownCounter(n, o...)
}

func (m recMeter) Float64Histogram(n string, o ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	m.p.add(m.scope, n, "histogram", metric.NewFloat64HistogramConfig(o...).Unit())
	return m.Meter.Float64Histogram(n, o...)
}

func (m recMeter) Float64Gauge(n string, o ...metric.Float64GaugeOption) (metric.Float64Gauge, error) {
	m.p.add(m.scope, n, "gauge", metric.NewFloat64GaugeConfig(o...).Unit())
	return m.Meter.Float64Gauge(n, o...)
}

func (m recMeter) Float64ObservableCounter(n string, o ...metric.Float64ObservableCounterOption) (metric.Float64ObservableCounter, error) {
	m.p.add(m.scope, n, "counter", metric.NewFloat64ObservableCounterConfig(o...).Unit())
	return m.Meter.Float64ObservableCounter(n, o...)
}

func (m recMeter) Float64ObservableUpDownCounter(n string, o ...metric.Float64ObservableUpDownCounterOption) (metric.Float64ObservableUpDownCounter, error) {
	m.p.add(m.scope, n, "updowncounter", metric.NewFloat64ObservableUpDownCounterConfig(o...).Unit())
	return m.Meter.Float64ObservableUpDownCounter(n, o...)
}

func (m recMeter) Float64ObservableGauge(n string, o ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	m.p.add(m.scope, n, "gauge", metric.NewFloat64ObservableGaugeConfig(o...).Unit())
	return m.Meter.Float64ObservableGauge(n, o...)
}

// TestMetricsTable: docs/operations.md's table of metrics lists exactly the
// instruments redissaver, stream and redisstore create (with the gauges
// registered and a consumer running), each with its instrument kind, its
// unit and the packages that create it.
func TestMetricsTable(t *testing.T) {
	rdb := redistest.Real(t)
	ctx := context.Background()
	mp := &recProvider{got: map[string]*instrument{}}
	prefix := redistest.Prefix(t)
	saver, err := redissaver.New(ctx, rdb, redissaver.Options{Prefix: prefix, AcceptEviction: true, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := saver.RegisterGauges()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = reg.Unregister() }()
	if _, err := stream.New(rdb, stream.Options{Prefix: prefix, MeterProvider: mp}); err != nil {
		t.Fatal(err)
	}
	if _, err := redisstore.New(ctx, rdb, redisstore.Options{Prefix: redistest.Prefix(t), MeterProvider: mp}); err != nil {
		t.Fatal(err)
	}

	doc := docTable(t)
	for name, in := range mp.got {
		d, ok := doc[name]
		switch {
		case !ok:
			t.Errorf("metric %s (%s, %s, %v) is not in docs/operations.md's table", name, in.kind, in.unit, in.packages)
		case d.kind != in.kind || d.unit != in.unit || !slices.Equal(d.packages, in.packages):
			t.Errorf("metric %s: the table says %s, %q, %v; the code registers %s, %q, %v", name, d.kind, d.unit, d.packages, in.kind, in.unit, in.packages)
		}
	}
	for name := range doc {
		if _, ok := mp.got[name]; !ok {
			t.Errorf("docs/operations.md lists %s, which no package registers", name)
		}
	}
	if len(doc) < 10 {
		t.Errorf("the table has %d metrics: it was not parsed", len(doc))
	}
}

var (
	rowRE  = regexp.MustCompile("^\\| `([a-z_.]+)` \\| ([a-z]+), `([^`]+)` \\| ([^|]+) \\|")
	codeRE = regexp.MustCompile("`([a-z]+)`")
)

// docTable parses the rows of the table under "### Metrics" in
// docs/operations.md.
func docTable(t *testing.T) map[string]instrument {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n### Metrics\n")
	if start < 0 {
		t.Fatal("docs/operations.md has no section ### Metrics")
	}
	text = text[start+1:]
	if end := strings.Index(text[4:], "\n#"); end >= 0 {
		text = text[:end+4]
	}
	out := map[string]instrument{}
	for _, line := range strings.Split(text, "\n") {
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var pkgs []string
		for _, p := range codeRE.FindAllStringSubmatch(m[4], -1) {
			pkgs = append(pkgs, p[1])
		}
		slices.Sort(pkgs)
		if _, dup := out[m[1]]; dup {
			t.Errorf("the table lists %s twice", m[1])
		}
		out[m[1]] = instrument{kind: m[2], unit: m[3], packages: pkgs}
	}
	return out
}
