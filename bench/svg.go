package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// chartOps are the operations the chart shows, in order; an entry ending in
// "/" matches every operation that starts with it (the delta history's
// "/steps=N").
var chartOps = []string{opEvalSha, opHGetAll, "Put", "PutWrites", "GetTuple.latest", "GetTuple.byid",
	"List.full", "List.page10", "DeltaChannelHistory/", "DeltaChannelHistory.walk/"}

var palette = []string{"#9e9e9e", "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"}

// chartSVG draws grouped bars of the p50 at concurrency 1 of every chart
// operation (x) for every implementation (a bar each), on a log scale.
// subtitle is printed under the title.
func chartSVG(rows []Row, subtitle string) string {
	var ops, impls []string
	p50 := map[[2]string]float64{}
	for _, want := range chartOps {
		for _, r := range rows {
			match := r.Op == want || (strings.HasSuffix(want, "/") && strings.HasPrefix(r.Op, want))
			if !match || r.Concurrency != 1 || !r.P50us.Valid() || r.P50us <= 0 {
				continue
			}
			if !slices.Contains(ops, r.Op) {
				ops = append(ops, r.Op)
			}
			p50[[2]string{r.Op, r.Impl}] = float64(r.P50us)
		}
	}
	// Implementations in a stable order: the limit, redcheck, then peers as
	// they appear.
	for _, r := range rows {
		if _, ok := p50[[2]string{r.Op, r.Impl}]; ok && !slices.Contains(impls, r.Impl) {
			impls = append(impls, r.Impl)
		}
	}
	slices.SortStableFunc(impls, func(a, b string) int { return implRank(a) - implRank(b) })

	const (
		left, right, bottom    = 70, 110, 150
		barW, groupGap, height = 14, 22, 360
	)
	legendRows := (len(impls) + 3) / 4
	top := 62 + legendRows*18 + 50 // legend, then room for the labels of the tallest bars
	lo, hi := 1.0, 10.0
	if len(p50) > 0 {
		vmin, vmax := math.Inf(1), 0.0
		for _, v := range p50 {
			vmin, vmax = min(vmin, v), max(vmax, v)
		}
		lo = math.Pow(10, math.Floor(math.Log10(vmin)))
		hi = math.Pow(10, math.Ceil(math.Log10(vmax)))
		if hi <= lo {
			hi = lo * 10
		}
	}
	groupW := max(1, len(impls))*barW + groupGap
	width := left + right + max(1, len(ops))*groupW
	y := func(v float64) float64 {
		return float64(top+height) - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*height
	}

	var b strings.Builder
	total := top + height + bottom
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, total, width, total)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, total)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">p50 latency per operation, concurrency 1 (log scale; lower is better)</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%d" y="40" fill="#555">%s</text>`+"\n", left, html.EscapeString(subtitle))
	for i, impl := range impls {
		lx, ly := left+(i%4)*190, 58+(i/4)*18
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			lx, ly, implColor(impl, impls), lx+17, ly+10, html.EscapeString(impl))
	}
	// Decade grid lines.
	for v := lo; v <= hi*1.0001; v *= 10 {
		gy := y(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n",
			left, gy, width-right, gy, left-6, gy+4, durationLabel(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", left, top+height, width-right, top+height)
	fmt.Fprintf(&b, `<text transform="translate(16,%d) rotate(-90)" text-anchor="middle" fill="#333">p50 per operation</text>`+"\n", top+height/2)
	if v, ok := p50[[2]string{opEvalSha, implLimit}]; ok {
		ly := y(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-dasharray="5,4"/><text x="%d" y="%.1f" font-size="10" fill="#555">limit: EVALSHA p50</text>`+"\n",
			left, ly, width-right, ly, implColor(implLimit, impls), width-right+6, ly+3)
	}
	for g, op := range ops {
		gx := left + g*groupW + groupGap/2
		for i, impl := range impls {
			v, ok := p50[[2]string{op, impl}]
			if !ok {
				continue
			}
			x := gx + i*barW
			by := y(v)
			fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				x, by, barW-2, float64(top+height)-by, implColor(impl, impls), html.EscapeString(impl), html.EscapeString(op), durationLabel(v))
			fmt.Fprintf(&b, `<text transform="translate(%d,%.1f) rotate(-90)" font-size="9" fill="#333">%s</text>`+"\n",
				x+barW/2+2, by-3, durationLabel(v))
		}
		cx := gx + len(impls)*barW/2
		fmt.Fprintf(&b, `<text transform="translate(%d,%d) rotate(-35)" text-anchor="end">%s</text>`+"\n",
			cx, top+height+14, html.EscapeString(op))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// implRank orders implementations in the chart.
func implRank(impl string) int {
	switch impl {
	case implLimit:
		return 0
	case implOurs:
		return 1
	}
	return 2
}

func implColor(impl string, impls []string) string {
	return palette[slices.Index(impls, impl)%len(palette)]
}

// durationLabel formats microseconds: "850 µs", "1.2 ms", "3 s".
func durationLabel(us float64) string {
	trim := func(f float64) string {
		s := fmt.Sprintf("%.3g", f)
		return s
	}
	switch {
	case us >= 1e6:
		return trim(us/1e6) + " s"
	case us >= 1e3:
		return trim(us/1e3) + " ms"
	}
	return trim(us) + " µs"
}
