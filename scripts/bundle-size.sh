#!/usr/bin/env bash
# Size of what a visitor downloads: index.html and every wasm, js and css
# file in dist/, raw and gzipped (-9), as a Markdown table for BENCHMARKS.md;
# then what a first visit loads (the page, its stylesheet, the glue and the
# wasm: the one build), the number the page's 400 KB budget is about.
# Usage: scripts/bundle-size.sh [dist-dir]
set -euo pipefail
dist="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/dist}"
[ -d "$dist" ] || { echo "bundle-size: $dist does not exist; run 'make dist' first" >&2; exit 1; }

kib() { awk -v b="$1" 'BEGIN { printf "%.1f KiB", b / 1024 }'; }

echo "| file | kind | raw | gzip -9 |"
echo "|---|---|---:|---:|"
total_raw=0
total_gz=0
while IFS= read -r f; do
  raw=$(stat -c %s "$f")
  gz=$(gzip -9 -c "$f" | wc -c)
  total_raw=$((total_raw + raw))
  total_gz=$((total_gz + gz))
  name="${f#"$dist"/}"
  # Trunk names files <crate>-<hash>.<ext>; the hash changes every build.
  # shellcheck disable=SC2001
  stable=$(echo "$name" | sed -E 's/-[0-9a-f]{1,16}(_bg)?\./\1./')
  echo "| $stable | ${f##*.} | $(kib "$raw") ($raw B) | $(kib "$gz") ($gz B) |"
done < <(find "$dist" -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.css' -o -name '*.html' \) | sort)
echo "| **total** | | $(kib "$total_raw") ($total_raw B) | $(kib "$total_gz") ($total_gz B) |"
first_raw=0
first_gz=0
while IFS= read -r f; do
  first_raw=$((first_raw + $(stat -c %s "$f")))
  first_gz=$((first_gz + $(gzip -9 -c "$f" | wc -c)))
done < <(find "$dist" -maxdepth 1 -type f \( -name index.html -o -name 'style-*.css' -o -name 'stampede-lab-*' \) | sort)
echo "| **a first visit** (index.html, style.css, the glue and the wasm) | | $(kib "$first_raw") ($first_raw B) | $(kib "$first_gz") ($first_gz B) |"
