#!/usr/bin/env bash
# Prints preset:seed:log_hash for every preset and a few seeds, as the host
# computes them; the wasm determinism test must reproduce each one exactly.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p stampede-catalogue --bin stampede-sim
sim=target/debug/stampede-sim
out=()
for preset in $("$sim" --list-presets | awk '{print $1}'); do
  for seed in 1 7 20261130; do
    hash="$("$sim" --preset "$preset" --seed "$seed" --json \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["log_hash"])')"
    out+=("$preset:$seed:$hash")
  done
done
IFS=,; echo "${out[*]}"
