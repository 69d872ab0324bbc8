# blacksmith: the broker-side reconciler for BOSH-deployed on-demand services.
# `make help` lists the targets.

SHELL      := /bin/bash
GO         ?= go
BIN        := bin
GOFLAGS_TEST ?= -race -count=1
STATICCHECK_VERSION := v0.7.0
export CGO_ENABLED := 1

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z][a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/blacksmith, bin/bosh-director-sim and bin/cc-sim
	$(GO) build -o $(BIN)/blacksmith ./cmd/blacksmith
	$(GO) build -o $(BIN)/bosh-director-sim ./cmd/bosh-director-sim
	$(GO) build -o $(BIN)/cc-sim ./cmd/cc-sim

.PHONY: vault
vault: ## build (once, cached) the real Vault server the tests and `make run` use
	@ci/vault-bin.sh >/dev/null

.PHONY: run
run: ## run the daemon on embedded defaults: real Vault dev server + Director and Cloud Controller simulators + sample catalog
	@$(MAKE) --no-print-directory -j2 build vault # the first time, Vault builds while the binaries do
	@VAULT_BIN=$$(ci/vault-bin.sh) ci/run-local.sh

.PHONY: tools
tools: ## install what the suites use and a fresh machine lacks (promtool, ruby, chromium; apt-get), saying what
	@ci/tools.sh

.PHONY: test
test: vault tools ## run every suite against a real Vault (race detector on); installs what it lacks first
	VAULT_BIN=$$(ci/vault-bin.sh) $(GO) test $(GOFLAGS_TEST) ./...

.PHONY: release-src
release-src: ## copy the Go source, modules vendored, into the BOSH release (manifests/release/src/blacksmith)
	ci/release/sync-src.sh

.PHONY: fuzz
FUZZTIME ?= 30s
fuzz: vault ## run every fuzz test for FUZZTIME each (default 30s); `make test` runs their seeds only
	@set -euo pipefail; export VAULT_BIN=$$(ci/vault-bin.sh); \
	for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    out=$$($(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) 2>&1) || { echo "$$out"; exit 1; }; \
	    echo "$$out" | grep -E '^fuzz: elapsed' | tail -n 1; \
	  done; \
	done

.PHONY: lint
lint: ## gofmt, go mod tidy, go vet, staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

.PHONY: bench
bench: vault ## benchmark the reconciler (cold and warm, 1,000 and 10,000 deployments) and hostile manifests; prints BENCH lines
	VAULT_BIN=$$(ci/vault-bin.sh) $(GO) run ./cmd/blacksmith-bench $(BENCH_ARGS)
	$(GO) test -run '^$$' -bench BenchmarkParseHostile -benchtime 3x ./reconciler/internal/match/

.PHONY: soak
SOAK_ARGS ?=
soak: vault ## ~12 min on loopback, not part of `make test`: 3 daemons with HA on a 3-node Vault Raft cluster, 2,000 deployments on 2 Directors, the platform cross-check, 10 OSB clients, an upgrade wave, Vault, Director and Cloud Controller faults on a schedule; prints FAULT and SOAK lines, exits 1 when an invariant did not hold
	VAULT_BIN=$$(ci/vault-bin.sh) $(GO) run ./cmd/blacksmith-soak $(SOAK_ARGS)

.PHONY: bench-scale
bench-scale: vault ## benchmark 100,000 deployments over 4 Directors (cold, steady, steady-1pct, footprint; ~17 min, ~1.5 GB; BENCH_ARGS="-memory-limit 450MiB" as the release's memory_limit); prints BENCH lines
	VAULT_BIN=$$(ci/vault-bin.sh) $(GO) run ./cmd/blacksmith-bench -n 100000 -directors 4 -scenarios cold,steady,steady-1pct,footprint -footprint-speed 2 $(BENCH_ARGS)

.PHONY: clean
clean: ## remove build output (the cached Vault binary stays)
	rm -rf $(BIN)
