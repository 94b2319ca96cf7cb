#!/usr/bin/env bash
# Writes data/conformance.tsv: the real fleet (stampede-fleet --conformance)
# run against a throwaway redis-server beside the simulation, one row per
# (preset, metric) with its tolerance. The server gets a free loopback port
# and a temporary directory, no persistence, and is stopped on every exit,
# failure included. The table is replaced only when every row is within its
# tolerance.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v redis-server >/dev/null || { echo "conformance: redis-server is not installed (make setup)" >&2; exit 1; }
cargo build -q --release -p stampede-redis --bin stampede-fleet

dir="$(mktemp -d "${TMPDIR:-/tmp}/stampede-conformance.XXXXXX")"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" \
  >"$dir/redis.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$dir/redis.log" >&2; echo "conformance: redis-server did not start" >&2; exit 1; }
  sleep 0.05
done

target/release/stampede-fleet --conformance --redis "redis://127.0.0.1:$port/" >"$dir/conformance.tsv"
mkdir -p data
mv "$dir/conformance.tsv" data/conformance.tsv
echo "conformance: wrote data/conformance.tsv ($(grep -vc '^#' data/conformance.tsv) lines with the header)"
