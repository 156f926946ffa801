package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
)

// header is the first element of latest.json: what was measured, on what,
// and how.
type header struct {
	Machine      machine           `json:"machine"`
	Redis        redisInfo         `json:"redis"`
	Date         string            `json:"date"`
	DurationS    float64           `json:"duration_s"`
	Command      string            `json:"command"`
	Workload     map[string]any    `json:"workload"`
	RatioToLimit string            `json:"ratio_to_limit"`
	RatioToFloor string            `json:"ratio_to_floor"`
	Metrics      map[string]string `json:"metrics"`
	Memory       memoryResult      `json:"memory"`
	MemoryOn     memoryResult      `json:"memory_compression_on"`
	Floors       []calibration     `json:"floors"`
	Peers        peerInfo          `json:"peers"`
	Targets      []target          `json:"targets"`
	// EndToEnd is the agent loop's pass (loop.go); nil in results of a
	// run before it existed.
	EndToEnd *endToEnd `json:"end_to_end,omitempty"`
	Notes    []string  `json:"notes"`
}

type machine struct {
	CPU          string `json:"cpu"`
	Cores        int    `json:"cores"`
	Go           string `json:"go"`
	OS           string `json:"os"`
	LoadAvgStart string `json:"load_avg_start"`
	LoadAvgEnd   string `json:"load_avg_end"`
}

type redisInfo struct {
	Version string `json:"version"`
	Server  string `json:"server"`
}

type peerInfo struct {
	Versions map[string]string `json:"versions"`
	Ran      []string          `json:"ran"`
	Skipped  []peerSkip        `json:"skipped"`
}

// peerSkip is an implementation that could not run, and why.
type peerSkip struct {
	Impl   string `json:"impl"`
	Reason string `json:"reason"`
}

// metricDocs says how every number of a row is measured.
var metricDocs = map[string]string{
	"ops_per_s":            "operations completed / wall time of the measured pass (all goroutines together)",
	"p50_us":               "nearest-rank median of per-operation latency (time.Now around each call, pool wait included)",
	"p99_us":               "nearest-rank 99th percentile of the same",
	"roundtrips_per_op":    "go-redis hook: one per command sent alone, one per pipeline; connection setup (HELLO, CLIENT SETINFO) not counted. Peers: pg queries; null for in-process savers",
	"bytes_per_op":         "bytes written + read on the client's net.Conn (a counting wrapper installed through redis.Options.Dialer) = sent_per_op + received_per_op. Peers: pg socket bytes; null for in-process savers",
	"server_us_per_op":     "INFO commandstats usec, read before and after each chunk of the pass, summed over the commands the client sent in it (not those a script ran: they are inside the script's time), / operations. Redis's own clock: not inflated by the client's CPU, but wall time (it runs on while other processes hold the CPU), and it excludes reading and parsing the request and writing the reply",
	"server_cpu_us_per_op": "INFO cpu used_cpu_user_main_thread + used_cpu_sys_main_thread, read before and after each chunk, / operations: all of Redis's main-thread work (request parsing and reply writing included, plus its ~10 Hz background cron), and CPU time, which other processes taking the CPU from Redis inflate far less than wall time",
	"floor_p50_us":         "p50 of the row's same-bytes floor (see ratio_to_floor); redcheck rows only",
	"allocs_per_op":        "runtime.MemStats.Mallocs delta over the pass / operations: the whole process, go-redis and the harness's own metadata map and ID included (about 5 per Put). null for Node peers",
	"ratio_to_limit":       ratioDefin,
	"ratio_to_floor":       floorDefin,
	"memory":               "see memory.method",
}

// printTable writes rows as an aligned table.
func printTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "impl\top\tc\tn\tops/s\tp50 µs\tp99 µs\tserver µs\tsrv cpu µs\trt/op\tsent B/op\trecv B/op\tallocs/op\t×limit\t×floor\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Impl, r.Op, r.Concurrency, r.N,
			fmtNum(r.OpsPerS, 0), fmtNum(r.P50us, 1), fmtNum(r.P99us, 1), fmtNum(r.ServerUS, 1), fmtNum(r.ServerCPUus, 1), fmtNum(r.RoundTrips, 2),
			fmtNum(r.Sent, 0), fmtNum(r.Recv, 0), fmtNum(r.AllocsPerOp, 0), fmtNum(r.RatioToLimit, 2), fmtNum(r.RatioToFloor, 2))
	}
	_ = tw.Flush()
}

// fmtNum formats n with prec decimals, or "-" when unmeasured.
func fmtNum(n Num, prec int) string {
	if !n.Valid() {
		return "-"
	}
	return strconv.FormatFloat(float64(n), 'f', prec, 64)
}

// encodeResults returns latest.json: an array whose first element is
// {"header": h} and whose other elements are the rows.
func encodeResults(h header, rows []Row) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	hb, err := json.MarshalIndent(map[string]header{"header": h}, "  ", "  ")
	if err != nil {
		return nil, err
	}
	buf.WriteString("  ")
	buf.Write(hb)
	for _, r := range rows {
		rb, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		buf.WriteString(",\n  ")
		buf.Write(rb)
	}
	buf.WriteString("\n]\n")
	return buf.Bytes(), nil
}

// decodeResults reverses encodeResults.
func decodeResults(b []byte) (header, []Row, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return header{}, nil, err
	}
	if len(raw) == 0 {
		return header{}, nil, fmt.Errorf("empty results")
	}
	var first struct {
		Header *header `json:"header"`
	}
	if err := json.Unmarshal(raw[0], &first); err != nil || first.Header == nil {
		return header{}, nil, fmt.Errorf("first element is not a header: %v", err)
	}
	rows := make([]Row, 0, len(raw)-1)
	for _, r := range raw[1:] {
		row := newRow("", "", 0)
		if err := json.Unmarshal(r, &row); err != nil {
			return header{}, nil, err
		}
		rows = append(rows, row)
	}
	return *first.Header, rows, nil
}

// writeFile writes b to dir/name through a temporary file.
func writeFile(dir, name string, b []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}
