package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// peersDir holds the Node harness, relative to the module root (the
// directory make runs in).
const peersDir = "bench/peers/js"

// jsDir is redcheck's TypeScript client, one of the peers' dependencies.
const jsDir = "js"

// peerOutput is what the Node harness printed: one JSON object per line,
// either a row or {"bytes": {...}} (the sent / received split of a row),
// {"meta": {...}}, {"ran": impl}, {"skip": {...}} or {"note": "..."}.
type peerOutput struct {
	rows     []Row
	versions map[string]string
	ran      []string
	skipped  []peerSkip
	notes    []string
}

// parsePeerOutput reads the Node harness's lines. Lines that are not JSON
// objects are kept as notes (they should not happen).
func parsePeerOutput(r io.Reader) (peerOutput, error) {
	out := peerOutput{versions: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe struct {
			Impl  *string `json:"impl"`
			Bytes *struct {
				Impl        string `json:"impl"`
				Op          string `json:"op"`
				Concurrency int    `json:"concurrency"`
				Sent, Recv  Num
			} `json:"bytes"`
			Meta map[string]string `json:"meta"`
			Skip *peerSkip         `json:"skip"`
			Ran  *string           `json:"ran"`
			Note *string           `json:"note"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			out.notes = append(out.notes, "unparsed peer output: "+string(line))
			continue
		}
		switch {
		case probe.Impl != nil:
			row := newRow("", "", 0)
			if err := json.Unmarshal(line, &row); err != nil {
				return out, fmt.Errorf("peer row %s: %w", line, err)
			}
			out.rows = append(out.rows, row)
		case probe.Bytes != nil:
			b := probe.Bytes
			for i := range out.rows {
				if r := &out.rows[i]; r.Impl == b.Impl && r.Op == b.Op && r.Concurrency == b.Concurrency {
					r.Sent, r.Recv = b.Sent, b.Recv
				}
			}
		case probe.Meta != nil:
			for k, v := range probe.Meta {
				out.versions[k] = v
			}
		case probe.Skip != nil:
			out.skipped = append(out.skipped, *probe.Skip)
		case probe.Ran != nil:
			out.ran = append(out.ran, *probe.Ran)
		case probe.Note != nil:
			out.notes = append(out.notes, *probe.Note)
		}
	}
	return out, sc.Err()
}

// runPeers runs the Node harness on redisURL and the Postgres of
// cfg.pgURL, installing its packages first when node_modules is missing.
// Whatever cannot run is reported in skipped, with the reason.
func runPeers(ctx context.Context, cfg config, redisURL string, log io.Writer) peerOutput {
	all := []string{"langgraph-js-memory", "langgraph-js-sqlite", "langgraph-js-postgres", "langgraph-js-redis"}
	skipAll := func(reason string) peerOutput {
		out := peerOutput{versions: map[string]string{}}
		for _, impl := range all {
			out.skipped = append(out.skipped, peerSkip{impl, reason})
		}
		return out
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return skipAll("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(peersDir, "package.json")); err != nil {
		return skipAll(fmt.Sprintf("%s not found (run from the module root): %v", peersDir, err))
	}
	// redcheck-js is a file: dependency of the peers (installJS).
	if err := installJS(ctx, log); err != nil {
		return skipAll(err.Error())
	}
	var notes []string
	pgURL, pgWhy := postgresFor(ctx, cfg.pgURL, log)
	if pgWhy != "" {
		notes = append(notes, "postgres: "+pgWhy)
	}
	args := []string{"bench.mjs",
		"--redis-url", redisURL, "--pg-url", pgURL, "--pg-skip-reason", pgWhy,
		"--threads", strconv.Itoa(cfg.threads), "--steps", strconv.Itoa(cfg.steps),
		"--ops", strconv.Itoa(cfg.ops), "--time-ms", strconv.FormatInt(cfg.budget.Milliseconds(), 10), "--rounds", strconv.Itoa(cfg.rounds),
		"--concurrency", joinInts(cfg.peerConc), "--state-sizes", joinInts(cfg.stateSizes),
		"--history", joinInts(peerHistory(cfg)), "--delta-steps", strconv.Itoa(cfg.deltaSteps),
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.peerTimeout)
	defer cancel()
	cmd := exec.CommandContext(pctx, node, args...)
	cmd.Dir, cmd.Stderr = peersDir, log
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return skipAll(err.Error())
	}
	if err := cmd.Start(); err != nil {
		return skipAll("node: " + err.Error())
	}
	out, perr := parsePeerOutput(stdout)
	werr := cmd.Wait()
	out.notes = append(notes, out.notes...)
	if perr != nil {
		out.notes = append(out.notes, "reading peer output: "+perr.Error())
	}
	if werr != nil {
		why := werr.Error()
		if errors.Is(pctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("stopped at the -peer-timeout of %v", cfg.peerTimeout)
		}
		out.notes = append(out.notes, "node harness: "+why+" (rows printed before are kept)")
		for _, impl := range all {
			if !containsImpl(out, impl) {
				out.skipped = append(out.skipped, peerSkip{impl, "node harness did not finish: " + why})
			}
		}
	}
	return out
}

func containsImpl(out peerOutput, impl string) bool {
	for _, s := range out.skipped {
		if s.Impl == impl {
			return true
		}
	}
	for _, r := range out.ran {
		if r == impl {
			return true
		}
	}
	return false
}

// peerHistory is the history sweep of the peers: the harness's, up to
// -peer-history-max.
func peerHistory(cfg config) []int {
	var out []int
	for _, h := range cfg.history {
		if h <= cfg.peerHistory {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		out = []int{cfg.history[0]}
	}
	return out
}

// postgresFor returns the Postgres URL the peer should use, or "" and the
// reason when none answers. It only ever connects to loopback; when nothing
// answers there it tries to start the machine's cluster the way the
// machine's notes say (pg_ctlcluster), once.
func postgresFor(ctx context.Context, raw string, log io.Writer) (string, string) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Sprintf("bad -pg-url %q", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !(host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return "", fmt.Sprintf("-pg-url host %q is not loopback; the benchmark only talks to this machine", host)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	addr := net.JoinHostPort(host, port)
	if dialOK(addr) {
		return raw, ""
	}
	ctl, err := exec.LookPath("pg_ctlcluster")
	versions, _ := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) == 0 {
		return "", fmt.Sprintf("nothing answers on %s and pg_ctlcluster / /etc/postgresql are absent", addr)
	}
	ver := versions[len(versions)-1].Name()
	fmt.Fprintf(log, "peers: nothing answers on %s; starting Postgres %s with pg_ctlcluster\n", addr, ver)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	msg, err := exec.CommandContext(sctx, ctl, "--skip-systemctl-redirect", ver, "main", "start").CombinedOutput()
	for range 50 {
		if dialOK(addr) {
			return raw, ""
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", fmt.Sprintf("nothing answers on %s, and pg_ctlcluster %s main start gave %v: %s", addr, ver, err, strings.TrimSpace(string(msg)))
}

func dialOK(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
