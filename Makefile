# Stampede Lab: build, serve, test and measure.
#
#   make setup   install whatever is missing (idempotent; safe to run again)
#   make serve   dev server on http://127.0.0.1:8080 with live reload
#                (RELAY=1 make serve: the room's relay beside it, on 8090)
#   make room    the room's relay with dist/ on one port (PORT=8090): remote
#                pairing for the kit, votes from phones; prints the links
#   make test    everything CI runs: fmt, clippy, host tests, wasm build,
#                browser tests, release build, end-to-end test
#   make dist    release build into dist/ (relative URLs: works from any folder)
#   make dist-single  the room pack: dist/ as one HTML file in dist-single/,
#                that runs opened from file:// with no server
#   make bench   criterion benchmarks of the core, and the bundle sizes of dist/
#
# Every tool is pinned and local: trunk and wasm-bindgen-cli through cargo,
# binaryen and playwright-core through npm into .tools/, Chromium, chromedriver
# and Redis from Debian. Trunk always runs --offline, so it never downloads.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
TOOLS := $(ROOT)/.tools
CARGO_BIN := $(or $(CARGO_HOME),$(HOME)/.cargo)/bin

# binaryen's wasm-opt from npm must come before /usr/bin: Debian's binaryen
# (version 108) produces broken output from current wasm-bindgen.
export PATH := $(TOOLS)/node_modules/.bin:$(CARGO_BIN):$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver
# Debug builds of the simulation are slower in a browser than the default 20 s allow.
export WASM_BINDGEN_TEST_TIMEOUT ?= 120

WASM_TARGET := wasm32-unknown-unknown
TRUNK_VERSION := 0.21.14
BINARYEN_VERSION := 132.0.0
PLAYWRIGHT_VERSION := 1.65.1
TERSER_VERSION := 5.51.2
AXE_VERSION := 4.14.1
DEBIAN_PACKAGES := chromium:chromium chromedriver:chromium-driver redis-server:redis-server node:nodejs npm:npm \
  go:golang-go /usr/share/gocode/src/github.com/gomodule/redigo/redis/redis.go:golang-github-gomodule-redigo-dev \
  /usr/lib/python3/dist-packages/redis/__init__.py:python3-redis
# The examples' TypeScript compiler, Node types and Redis client (npm, into .tools/).
TYPESCRIPT_VERSION := 5.9.3
TYPES_NODE_VERSION := 20.19.43
NODE_REDIS_VERSION := 4.7.1

# The wasm-bindgen version Cargo.lock pins; the CLI and the runner must match it.
lock_wasm_bindgen = awk '$$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock

.PHONY: help setup setup-rust setup-lock setup-trunk setup-wasm-bindgen setup-node setup-debian \
        serve room dist dist-single test test-host test-browser e2e bench bundle-size frame-probe clean

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------- setup

setup: setup-debian setup-rust setup-lock setup-trunk setup-wasm-bindgen setup-node

setup-rust:
	@if ! rustup target list --installed | grep -qx '$(WASM_TARGET)'; then \
	  echo "setup: adding rust target $(WASM_TARGET)"; rustup target add $(WASM_TARGET); \
	fi
	@for c in rustfmt clippy; do \
	  if ! rustup component list --installed | grep -q "^$$c"; then \
	    echo "setup: adding rust component $$c"; rustup component add $$c; \
	  fi; \
	done

# Downloads every crate once, so that trunk and the tests can run offline.
setup-lock:
	@cargo fetch --quiet
	@want="$$($(lock_wasm_bindgen))"; \
	have="$$(sed -nE 's/^wasm_bindgen = "([^"]+)".*/\1/p' Trunk.toml)"; \
	if [ "$$want" != "$$have" ]; then \
	  echo "setup: Cargo.lock pins wasm-bindgen $$want but Trunk.toml says $$have; make them agree" >&2; exit 1; \
	fi

setup-trunk:
	@if trunk --version 2>/dev/null | grep -qw '$(TRUNK_VERSION)'; then :; else \
	  echo "setup: installing trunk $(TRUNK_VERSION) (several minutes)"; \
	  cargo install --locked trunk --version $(TRUNK_VERSION); \
	fi

setup-wasm-bindgen: setup-lock
	@want="$$($(lock_wasm_bindgen))"; \
	if [ -z "$$want" ]; then echo "setup: no wasm-bindgen in Cargo.lock" >&2; exit 1; fi; \
	if wasm-bindgen --version 2>/dev/null | grep -qw "$$want" \
	   && wasm-bindgen-test-runner --version 2>/dev/null | grep -qw "$$want"; then :; else \
	  echo "setup: installing wasm-bindgen-cli $$want (the version Cargo.lock pins)"; \
	  cargo install wasm-bindgen-cli --version "$$want"; \
	fi

setup-node:
	@want="binaryen@$(BINARYEN_VERSION) playwright-core@$(PLAYWRIGHT_VERSION) terser@$(TERSER_VERSION) axe-core@$(AXE_VERSION) \
	  typescript@$(TYPESCRIPT_VERSION) @types/node@$(TYPES_NODE_VERSION) redis@$(NODE_REDIS_VERSION)"; \
	for pkg in $$want; do \
	  v="$$(node -p "require('$(TOOLS)/node_modules/$${pkg%@*}/package.json').version" 2>/dev/null || true)"; \
	  if [ "$$v" != "$${pkg##*@}" ]; then \
	    echo "setup: installing $$want into .tools/"; \
	    mkdir -p "$(TOOLS)"; \
	    npm install --prefix "$(TOOLS)" --no-audit --no-fund --save-exact $$want; \
	    break; \
	  fi; \
	done
	@wasm-opt --version | grep -q 'version 132' || { echo "setup: wasm-opt on PATH is not binaryen 132: $$(command -v wasm-opt)" >&2; exit 1; }

setup-debian:
	@missing=""; \
	for pair in $(DEBIAN_PACKAGES); do \
	  command -v "$${pair%%:*}" >/dev/null 2>&1 || [ -e "$${pair%%:*}" ] || missing="$$missing $${pair#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "setup: installing Debian packages:$$missing"; \
	  $$sudo apt-get update; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	fi

# ---------------------------------------------------------------- build

# The dev build goes to target/serve so that dist/ only ever holds a release build.
# RELAY=1 starts the room's relay (crates/stampede-relay) beside it, stopped
# with the dev server; open the page with ?relay=ws://127.0.0.1:8090.
serve: setup
	@if [ -n "$${RELAY:-}" ]; then \
	  cargo build -q -p stampede-relay; \
	  target/debug/stampede-relay --host 127.0.0.1 --port 8090 & relay=$$!; \
	  trap 'kill $$relay 2>/dev/null' EXIT INT TERM; \
	  echo "serve: the relay is on ws://127.0.0.1:8090: open http://127.0.0.1:8080/?kit=1&relay=ws://127.0.0.1:8090"; \
	  trunk serve --offline --address 127.0.0.1 --port 8080 --dist target/serve; \
	else \
	  trunk serve --offline --address 127.0.0.1 --port 8080 --dist target/serve; \
	fi

# The room's relay and the built page on one port, reachable by the room's
# phones (it listens on every address); prints the links to open.
PORT ?= 8090
room: setup
	@[ -f dist/index.html ] || $(MAKE) --no-print-directory dist
	cargo run --release -q -p stampede-relay -- --dist dist --port $(PORT)

dist: setup
	rm -rf dist
	trunk build --offline --release --public-url ./
	node scripts/finish-dist.mjs dist
	@if grep -Eq 'autoreload|__trunk_address__|new WebSocket' dist/index.html; then \
	  echo "dist: the release page contains trunk's live-reload script" >&2; exit 1; fi
	@if grep -Eq '(href|src)=["'"'"']?/' dist/index.html; then \
	  echo "dist: dist/index.html has an absolute URL; the site must work from any folder" >&2; exit 1; fi
	@echo "dist: built $$(find dist -type f | wc -l) files into dist/"

# One file for a room without a network: the wasm, the loader and the styles
# inlined, a policy of its own (scripts/dist-single.mjs). Built from dist/.
dist-single: dist
	rm -rf dist-single
	node scripts/dist-single.mjs dist dist-single

# ---------------------------------------------------------------- test

test: setup
	cargo fmt --all --check
	python3 scripts/import-graph.py
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p stampede-lab --all-targets --target $(WASM_TARGET) -- -D warnings
	# The library as a service gets it: the workspace switches on stampede-fleet's `harness` feature.
	cargo clippy -p stampede-redis --all-targets -- -D warnings
	cargo clippy -p stampede-redis --all-targets --all-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc -p stampede-redis --no-deps --all-features
	cargo test --workspace
	cargo test -p stampede-redis --all-features --test observe
	cargo build -p stampede --target $(WASM_TARGET)
	$(MAKE) --no-print-directory test-browser
	$(MAKE) --no-print-directory dist-single
	$(MAKE) --no-print-directory e2e
	$(MAKE) --no-print-directory examples

# The host's event-log hash for the interview card (seed 7) is baked into the
# wasm test, which must reproduce it bit for bit in the browser.
test-browser: setup
	@hash="$$(cargo run -q -p stampede-catalogue --bin stampede-sim -- --seed 7 --json \
	  | python3 -c 'import json, sys; h = json.load(sys.stdin)["log_hash"]; \
	      print(format(h, "016x") if isinstance(h, int) else h.lower().removeprefix("0x").zfill(16))')"; \
	echo "test-browser: host log_hash for seed 7 is $$hash"; \
	HOST_LOG_HASH="$$hash" cargo test -p stampede-lab --target $(WASM_TARGET) --test web
	HOST_LOG_HASHES="$$(scripts/host-hashes.sh)" cargo test -p stampede-lab --target $(WASM_TARGET) --test determinism

e2e: setup-debian setup-node
	cargo build -q -p stampede-catalogue --bin stampede-sim
	# The relay-*.mjs specs start the real relay on a free loopback port.
	cargo build -q -p stampede-relay --bin stampede-relay
	tests/e2e/run.sh

# ---------------------------------------------------------------- measure

bench: setup
	cargo bench -p stampede
	$(MAKE) --no-print-directory dist
	$(MAKE) --no-print-directory bundle-size
	$(MAKE) --no-print-directory frame-probe

# Frame times, long tasks and first-frame time of the built page in headless
# Chromium (needs dist/; make bench builds it).
frame-probe: setup-debian setup-node
	@mkdir -p bench-out
	tests/e2e/run.sh scripts/frame-probe.mjs | tee bench-out/frame-probe.md

bundle-size:
	@mkdir -p bench-out
	scripts/bundle-size.sh dist | tee bench-out/bundle-size.md

clean:
	cargo clean
	rm -rf dist dist-single bench-out tests/e2e/screenshots

# ---------------------------------------------------------------- conformance

# The real fleet against a throwaway redis-server, beside the simulation:
# writes data/conformance.tsv (fails, leaving the file as it was, when a
# metric is outside its tolerance).
.PHONY: conformance
conformance: setup-debian
	scripts/conformance.sh

# ---------------------------------------------------------------- examples

# The card's read path in Go, Python, TypeScript and Rust (examples/README.md),
# each tested against a throwaway redis-server. Go and Python on Debian's
# packages (Python is Debian's /usr/bin/python3, the one python3-redis is for),
# TypeScript through the pinned tsc, Rust on stampede-redis.
.PHONY: examples
examples: setup-debian setup-node
	@for t in go /usr/bin/python3 node tsc cargo redis-server; do \
	  command -v $$t >/dev/null || { echo "examples: $$t is missing (make setup installs it)" >&2; exit 1; }; \
	done
	cd examples/go && GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= go test -count=1
	cd examples/python && PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest
	cd examples/typescript && rm -rf build && tsc -p . \
	  && NODE_PATH=$(TOOLS)/node_modules node --test --test-reporter=spec build/stampede.test.js
	cd examples/rust && CARGO_TARGET_DIR="$${CARGO_TARGET_DIR:-$(ROOT)/target/examples}" \
	  cargo test --offline --quiet --test stampede -- --nocapture
