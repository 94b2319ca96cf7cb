#!/usr/bin/env bash
# Builds the page's tour build (crates/tour: the page without its `full`
# feature; src/more.rs says which build an address gets) into a dist/ that
# trunk has just filled with the full build: the same cargo profile,
# wasm-bindgen and wasm-opt passes as trunk's for the full build (the
# passes are read from index.html), named like trunk's files
# (stampede-tour-<hash>.js and _bg.wasm). scripts/finish-dist.mjs then
# minifies both loaders and writes the loader that picks one.
# Usage: scripts/build-tour.sh [dist]   (make dist runs it)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="${1:-$root/dist}"
[ -f "$dist/index.html" ] || { echo "build-tour: $dist/index.html is missing; run trunk first" >&2; exit 1; }
cd "$root"

params="$(sed -n 's/.*data-bin="stampede-lab"[^>]*data-wasm-opt-params="\([^"]*\)".*/\1/p' index.html)"
level="$(sed -n 's/.*data-bin="stampede-lab"[^>]*data-wasm-opt="\([^"]*\)".*/\1/p' index.html)"
[ -n "$level" ] || { echo "build-tour: index.html names no wasm-opt level for stampede-lab" >&2; exit 1; }

cargo build --offline --release --target wasm32-unknown-unknown -p stampede-tour --bin stampede-tour
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
wasm-bindgen --target web --no-typescript --out-dir "$out" \
  target/wasm32-unknown-unknown/release/stampede-tour.wasm
# shellcheck disable=SC2086
wasm-opt "-O$level" $params "$out/stampede-tour_bg.wasm" -o "$out/opt.wasm"
hash="$(sha256sum "$out/opt.wasm" | cut -c1-16)"
cp "$out/opt.wasm" "$dist/stampede-tour-${hash}_bg.wasm"
cp "$out/stampede-tour.js" "$dist/stampede-tour-${hash}.js"
echo "build-tour: stampede-tour-${hash} ($(stat -c %s "$dist/stampede-tour-${hash}_bg.wasm") bytes of wasm)"
