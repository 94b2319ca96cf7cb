#!/usr/bin/env bash
# Writes data/conformance.tsv: the real fleet (stampede-fleet --conformance)
# run against a throwaway redis-server beside the simulation, one row per
# (preset, metric) with its tolerance. The server gets a free loopback port
# and a temporary directory, no persistence, and is stopped on every exit,
# failure included. The table is replaced only when every row is within its
# tolerance. A burst's or cold start's real arrivals can run past their
# spread on a loaded machine (tasks polled late ask late, and recompute):
# each run is judged, as the fleet's tests judge it (fleet::judge), against
# the simulation of the nominal spread and of the window it really had, and
# a `# arrivals:` line records that window when it was wider.
#
#   scripts/conformance.sh            one redis-server -> data/conformance.tsv
#   scripts/conformance.sh --cluster  a three-node Redis Cluster (three
#                                     primaries, redis-cli --cluster create)
#                                     -> data/conformance-cluster.tsv
set -euo pipefail
cd "$(dirname "$0")/.."

cluster=0
case "${1:-}" in
  "") ;;
  --cluster) cluster=1 ;;
  *) echo "usage: scripts/conformance.sh [--cluster]" >&2; exit 2 ;;
esac

command -v redis-server >/dev/null || { echo "conformance: redis-server is not installed (make setup)" >&2; exit 1; }
cargo build -q --release -p stampede-fleet --bin stampede-fleet

dir="$(mktemp -d "${TMPDIR:-/tmp}/stampede-conformance.XXXXXX")"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# A free loopback port; for a cluster node, its bus port (+10000) free too.
free_port() {
  python3 - "$1" <<'PY'
import random, socket, sys
bus = sys.argv[1] == "1"
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
if not bus:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); sys.exit()
for _ in range(1000):
    p = random.randint(20000, 45000)
    if free(p) and free(p + 10000):
        print(p); sys.exit()
sys.exit("no free port pair")
PY
}

start_server() { # port [extra flags...]
  local port="$1"; shift
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" "$@" \
    >"$dir/redis-$port.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 200); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  cat "$dir/redis-$port.log" >&2
  echo "conformance: redis-server on port $port did not start" >&2
  exit 1
}

if [ "$cluster" = 0 ]; then
  port="$(free_port 0)"
  start_server "$port"
  redis="redis://127.0.0.1:$port/"
  out=data/conformance.tsv
else
  ports=()
  for _ in 1 2 3; do
    p="$(free_port 1)"
    start_server "$p" --cluster-enabled yes --cluster-config-file "$dir/nodes-$p.conf"
    ports+=("$p")
  done
  redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes \
    >"$dir/create.log" 2>&1 || { cat "$dir/create.log" >&2; exit 1; }
  for p in "${ports[@]}"; do
    for _ in $(seq 200); do
      redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
      sleep 0.05
    done
    redis-cli -p "$p" cluster info | grep -q '^cluster_state:ok' \
      || { echo "conformance: node $p never reported cluster_state:ok" >&2; exit 1; }
  done
  redis="$(printf 'redis://127.0.0.1:%s/,' "${ports[@]}")"
  redis="${redis%,}"
  out=data/conformance-cluster.tsv
fi

"${CARGO_TARGET_DIR:-target}/release/stampede-fleet" --conformance --redis "$redis" >"$dir/conformance.tsv"
mkdir -p data
mv "$dir/conformance.tsv" "$out"
echo "conformance: wrote $out ($(grep -vc '^#' "$out") lines with the header)"
