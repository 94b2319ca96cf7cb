#!/usr/bin/env bash
# End-to-end test of the built site: serve dist/ from a sub-folder (so relative
# URLs are exercised) with a throwaway static server on a free loopback port,
# run every *.mjs here (or the scripts given as arguments) against it with
# headless Chromium, stop the server.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# E2E_DIST serves another build (a second worker building its own dist).
dist="${E2E_DIST:-$root/dist}"
[ -f "$dist/index.html" ] || { echo "e2e: $dist/index.html is missing; run 'make dist' first" >&2; exit 1; }

site="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$site"
}
trap cleanup EXIT INT TERM
ln -s "$dist" "$site/lab"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
python3 -m http.server --bind 127.0.0.1 --directory "$site" "$port" >"$site/server.log" 2>&1 &
server=$!

url="http://127.0.0.1:$port/lab/"
for _ in $(seq 1 100); do
  if python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "$url" 2>/dev/null; then
    break
  fi
  kill -0 "$server" 2>/dev/null || { echo "e2e: static server died:" >&2; cat "$site/server.log" >&2; exit 1; }
  sleep 0.1
done

export E2E_URL="$url"
passed=0
failed=0
# With arguments, run those scripts instead (make bench runs the frame probe).
specs=("$@")
[ "${#specs[@]}" -gt 0 ] || specs=("$root"/tests/e2e/*.mjs)
for spec in "${specs[@]}"; do
  if node "$spec"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
