package main

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
)

// Num is a measured number. It is written to JSON rounded to three decimals,
// and as null when it was not measured (NaN): allocations of a Node peer,
// round trips of an in-process saver, a ratio without a limit to compare to.
type Num float64

// NA is the value of a number that was not measured.
var NA = Num(math.NaN())

// Valid reports whether n was measured.
func (n Num) Valid() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// MarshalJSON writes n with at most three decimals, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Valid() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, math.Round(float64(n)*1000)/1000, 'f', -1, 64), nil
}

// UnmarshalJSON reads a number, or null as NA.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NA
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Row is one measured operation: the keys of issue 6, and those issue 14
// added (bytes by direction, server time, the same-bytes floor).
type Row struct {
	Impl         string `json:"impl"`
	Op           string `json:"op"`
	Concurrency  int    `json:"concurrency"`
	N            int    `json:"n"`
	OpsPerS      Num    `json:"ops_per_s"`
	P50us        Num    `json:"p50_us"`
	P99us        Num    `json:"p99_us"`
	RoundTrips   Num    `json:"roundtrips_per_op"`
	BytesPerOp   Num    `json:"bytes_per_op"`
	AllocsPerOp  Num    `json:"allocs_per_op"`
	RatioToLimit Num    `json:"ratio_to_limit"`

	// Sent and Recv split BytesPerOp (= Sent + Recv) by direction.
	Sent Num `json:"sent_per_op"`
	Recv Num `json:"received_per_op"`
	// ServerUS is the time Redis spent per operation in the commands the
	// client sent (INFO commandstats, wall time on Redis's clock).
	ServerUS Num `json:"server_us_per_op"`
	// ServerCPUus is the CPU time of Redis's main thread per operation
	// (INFO cpu): all its work, reading requests and writing replies
	// included, in CPU time: other processes taking the CPU from Redis
	// inflate it far less than ServerUS.
	ServerCPUus Num `json:"server_cpu_us_per_op"`
	// FloorP50us and RatioToFloor compare a redcheck row with its
	// same-bytes floor (see floorDefin).
	FloorP50us   Num `json:"floor_p50_us"`
	RatioToFloor Num `json:"ratio_to_floor"`
}

// newRow returns a row with every number unmeasured.
func newRow(impl, op string, concurrency int) Row {
	return Row{Impl: impl, Op: op, Concurrency: concurrency,
		OpsPerS: NA, P50us: NA, P99us: NA, RoundTrips: NA, BytesPerOp: NA,
		AllocsPerOp: NA, RatioToLimit: NA, Sent: NA, Recv: NA, ServerUS: NA, ServerCPUus: NA, FloorP50us: NA, RatioToFloor: NA}
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest value that at least p% of the values
// are less than or equal to. It returns 0 for no values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// latencyStats sorts lat in place and returns its p50 and p99 in
// microseconds.
func latencyStats(lat []time.Duration) (p50, p99 Num) {
	if len(lat) == 0 {
		return NA, NA
	}
	slices.Sort(lat)
	us := func(d time.Duration) Num { return Num(float64(d) / float64(time.Microsecond)) }
	return us(percentile(lat, 50)), us(percentile(lat, 99))
}

// Names of the limit's operations, and of the implementation they belong to.
const (
	implLimit  = "limit"
	opEvalSha  = "EVALSHA"
	opHGetAll  = "HGETALL"
	implOurs   = "redcheck"
	ratioDefin = "at concurrency 1: p50 / the limit's EVALSHA p50 at concurrency 1; at concurrency > 1 (throughput rows): the limit's EVALSHA ops/s / ops/s at the same concurrency. Both read as 'times the cost of the limit': 1 is the limit, higher is slower."
)

// fillRatios sets RatioToLimit on every row from the limit's EVALSHA row of
// the same concurrency, and the floor of every redcheck row from its floor
// rows (SET:<op> and GET:<op>, same concurrency); rows without one keep NA.
func fillRatios(rows []Row) {
	limit := map[int]Row{}
	floors := map[string]Row{}
	for _, r := range rows {
		if r.Impl == implLimit && r.Op == opEvalSha {
			limit[r.Concurrency] = r
		}
		if r.Impl == implFloor {
			floors[r.Op+"@"+strconv.Itoa(r.Concurrency)] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		r.RatioToLimit = NA
		if l, ok := limit[r.Concurrency]; ok {
			r.RatioToLimit = ratio(*r, l, r.Concurrency)
		}
		r.FloorP50us, r.RatioToFloor = NA, NA
		if r.Impl != implOurs {
			continue
		}
		at := "@" + strconv.Itoa(r.Concurrency)
		set, okS := floors[floorSet+r.Op+at]
		get, okG := floors[floorGet+r.Op+at]
		if !okS || !okG {
			continue
		}
		// The dearer of the two: the slower p50, the lower throughput.
		f := set
		if r.Concurrency == 1 && get.P50us > set.P50us || r.Concurrency > 1 && get.OpsPerS < set.OpsPerS {
			f = get
		}
		r.FloorP50us = f.P50us
		r.RatioToFloor = ratio(*r, f, r.Concurrency)
	}
}

// ratio reads "times the cost of base": at concurrency 1 the p50 of r over
// base's, higher up base's ops/s over r's. NA when either is missing.
func ratio(r, base Row, conc int) Num {
	if conc == 1 {
		if r.P50us.Valid() && base.P50us.Valid() && base.P50us > 0 {
			return r.P50us / base.P50us
		}
		return NA
	}
	if r.OpsPerS.Valid() && base.OpsPerS.Valid() && r.OpsPerS > 0 && base.OpsPerS > 0 {
		return base.OpsPerS / r.OpsPerS
	}
	return NA
}
