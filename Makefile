# redcheck developer tasks. Run `make` or `make help` for the list.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 60s
# The floor toolchain: the Go release go.mod's go directive names (1.23, the
# first with iter.Seq2), at its latest patch. `make test-floor` downloads it
# through the module proxy (GOTOOLCHAIN) on first use.
FLOOR_GO ?= go1.23.12
# staticcheck, pinned: `go run` builds it once into the module cache (it
# needs the current toolchain, not the floor one: lint runs on the current).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Where `make cover` writes its profile (outside the tree by default).
COVERPROFILE ?= $(or $(TMPDIR),/tmp)/redcheck.coverprofile

.PHONY: scale help demo test test-adapters test-race test-floor soak test-short test-cluster test-js lint fuzz fuzz-ci bench bench-quick bench-instructions bench-go cover

help: ## List the targets
	@echo "usage: make TARGET [FUZZTIME=60s]"
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

demo: ## Run the quickstart example
	$(GO) run ./examples/quickstart

# The tests that measure how long Redis is blocked (a PING loop and
# SLOWLOG beside each bounded operation) run on their own after the rest,
# one package at a time and without the race detector: other packages'
# tests running beside them on a 2-core machine preempt redis-server for
# tens of milliseconds and would be read as blocking.
BLOCKING_TESTS := TestBoundedAtScale|TestBoundedWidePrune|TestBoundedWork|TestGapHandlingBlocksNothing|TestBoundedRekey

# Tests that fill a real Redis with 100,000 threads: under the race
# detector the fill alone takes minutes, so they run after the race run,
# without it (they skip themselves under -race).
SCALE_TESTS := TestThreadsFirstPageScale

test: ## go vet, then all tests with the race detector (both tiers), then the Redis-blocking measurements and the scale tests alone, then the adapters
	$(GO) vet ./...
	$(GO) test -race -count=1 -skip '$(BLOCKING_TESTS)' ./...
	$(GO) test -count=1 -p 1 -run '$(BLOCKING_TESTS)' ./redissaver/ ./redisstore/ ./stream/ ./cmd/redcheck/
	$(GO) test -count=1 -run '$(SCALE_TESTS)' ./internal/ui/
	$(MAKE) --no-print-directory test-adapters

# The adapters to other frameworks are modules of their own (adapters/eino:
# a CheckPointStore for cloudwego/eino), so that the root module never
# depends on those frameworks; ./... at the root does not reach them (a
# nested go.mod ends a pattern), so every target runs them in their
# directory. Each requires the root module through a replace of ../..
ADAPTERS := adapters/eino

test-adapters: ## The adapters' modules (adapters/eino): go vet, then their tests with the race detector (both tiers)
	@for d in $(ADAPTERS); do \
		echo "==> $$d"; \
		(cd "$$d" && $(GO) vet ./... && $(GO) test -race -count=1 ./...) || exit 1; \
	done

# Without the race detector: the race run happens on the current toolchain
# (make test); this one shows that the module builds, vets and passes on
# its floor, with the go-redis floor go.mod requires.
test-floor: ## go vet, then all tests (no race detector) on the floor toolchain FLOOR_GO
	GOTOOLCHAIN=$(FLOOR_GO) $(GO) version
	GOTOOLCHAIN=$(FLOOR_GO) $(GO) vet ./...
	GOTOOLCHAIN=$(FLOOR_GO) $(GO) test -count=1 -skip '$(BLOCKING_TESTS)' ./...
	@for d in $(ADAPTERS); do \
		echo "==> $$d"; \
		(cd "$$d" && GOTOOLCHAIN=$(FLOOR_GO) $(GO) vet ./... && GOTOOLCHAIN=$(FLOOR_GO) $(GO) test -count=1 ./...) || exit 1; \
	done

test-cluster: ## Redis Cluster tests (3+3 local cluster: kit, failover, ...), race detector
	REDCHECK_CLUSTER=1 $(GO) test -race -count=1 -run Cluster ./...

# The TypeScript client (js/) and its example: npm ci (exact versions from
# the lockfiles), the build (which copies scripts/*.lua), then vitest: format
# vectors, the LangGraph.js validation suite on a redis-server and on a local
# 3+3 Redis Cluster, the cross-language tests with the Go saver and CLI, and
# the example agent with the Go dashboard. Needs node >= 20, npm, go,
# redis-server and redis-cli. Not part of `make test` (it needs Node and the
# npm registry); .ci/run runs it.
NPM ?= npm
test-js: ## TypeScript client (js/) and examples/langgraphjs: npm ci, build, vitest (redis-server and a 3+3 cluster)
	cd js && $(NPM) ci && REDCHECK_CLUSTER=1 $(NPM) test
	cd examples/langgraphjs && $(NPM) ci && $(NPM) test

test-race: ## Same as test: every test runs with the race detector
	$(MAKE) --no-print-directory test

scale: ## TestBoundedAtScale at 200,000 and 1,000,000 checkpoints per thread, TestBoundedWidePrune at 100,000, the UI's first page of 100,000 threads in < 1 s (not in CI; about 20 min)
	REDCHECK_SCALE=200000 $(GO) test -count=1 -run TestBoundedAtScale -timeout 60m -v ./redissaver/
	REDCHECK_SCALE=1000000 $(GO) test -count=1 -run TestBoundedAtScale -timeout 120m -v ./redissaver/
	REDCHECK_WIDE=100000 $(GO) test -count=1 -run TestBoundedWidePrune -timeout 30m -v ./redissaver/
	REDCHECK_SCALE=1 $(GO) test -count=1 -run '$(SCALE_TESTS)' -v ./internal/ui/

soak: ## 10-minute soak on a dedicated redis-server: Redis memory and goroutines must stay flat (not in CI)
	REDCHECK_SOAK=$(or $(SOAK),10m) $(GO) test -count=1 -run TestSoak -timeout 30m -v ./redissaver/

test-short: ## All tests, without the race detector
	$(GO) test -count=1 ./...

# Tracked files stay under 1 MiB: binaries, dumps and bulky generated data do
# not belong in the repository. Sizes are those of the staged blobs (git
# ls-files -s), so the check is the same on every OS and needs no checkout.
MAX_FILE_BYTES ?= 1048576

lint: ## Fail on a tracked file over 1 MiB, on unformatted files (gofmt -l), then go vet, then staticcheck (default checks); the adapters' modules too
	@big="$$(git ls-files -s | awk -F'\t' '{split($$1, a, " "); print a[2], $$2}' | git cat-file --batch-check='%(objectsize) %(rest)' | awk -v max=$(MAX_FILE_BYTES) '$$1 > max')"; \
	if [ -n "$$big" ]; then echo "tracked files over $(MAX_FILE_BYTES) bytes (size, path):"; echo "$$big"; exit 1; fi
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@for d in $(ADAPTERS); do \
		echo "==> $$d"; \
		(cd "$$d" && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...) || exit 1; \
	done

fuzz: ## Run every Fuzz* target in the tree for FUZZTIME each
	@list="$$($(GO) test -list '^Fuzz' ./...)"; \
	targets="$$(awk '/^Fuzz/ {n[c++] = $$1; next} /^ok/ {for (i = 0; i < c; i++) print $$2, n[i]; c = 0}' <<<"$$list")"; \
	if [ -z "$$targets" ]; then echo "no Fuzz targets found"; exit 0; fi; \
	while read -r pkg name; do \
		echo "==> $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$pkg" </dev/null; \
	done <<<"$$targets"

# A count, not a duration: with go1.26 a duration can fail at its own
# deadline with "context deadline exceeded" (go.dev/issue/75804, fixed in 1.27).
fuzz-ci: ## Run every Fuzz* target briefly (30,000 inputs each), as CI does
	$(MAKE) --no-print-directory fuzz FUZZTIME=30000x

bench: ## Benchmark harness (bench/): redcheck vs the limit vs LangGraph.js peers; writes bench/results/
	$(GO) run ./bench

bench-quick: ## A ~30 s smoke run of the benchmark harness (results to a temporary directory)
	$(GO) run ./bench -quick

bench-instructions: ## Instructions Redis runs inside the scripts per operation, under valgrind's callgrind (repeatable); compares with and rewrites bench/results/instructions.json
	$(GO) run ./bench -instructions

bench-go: ## Run all testing.B benchmarks with allocation stats
	$(GO) test -run='^$$' -bench=. -benchmem ./...

cover: ## Test with coverage; print per-function totals (profile: COVERPROFILE)
	$(GO) test -count=1 -covermode=atomic -coverprofile='$(COVERPROFILE)' ./...
	$(GO) tool cover -func='$(COVERPROFILE)'
	@echo "HTML report: go tool cover -html='$(COVERPROFILE)'"
