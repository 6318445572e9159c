#!/usr/bin/env bash
# Temp runs stored plainly and zstd-compressed (--compress-temp): time and temp bytes written.
#
#   bash bench/temp_compression.sh [--lines N] [--dir DIR] [--runs K] [--memory SIZE] [--level L]
#
# N `gensort -a` lines (default 10^7, 1 GB) in DIR (default $TMPDIR or /tmp), sorted K times each
# (default 1; medians reported) under -S SIZE (default 100M: too small for the input's entries, so
# the sort spills rather than sorting a cached input from its mapping), runs in DIR, two ways:
#   1. records: `--record-size=100 --key-bytes=0:10`;
#   2. lines: the whole line in byte order (`--locale-order=bytes`);
# each with plain runs (--no-compress-temp) and with --compress-temp=L (default 1). The input is
# read into the page cache first; the output goes to DIR. Reported: wall time, the runs' bytes
# (every merge level's) and the bytes written to temp (the statistics' temp_run_bytes and
# temp_written_bytes), merge levels, peak RSS, and the machine (CPU, threads, load average before
# and after, the filesystem of DIR). Outputs are checked: plain and compressed byte-identical, and
# records by valsort. Generated files are deleted at the end.
set -euo pipefail
lines=10000000 dir=${TMPDIR:-/tmp} runs=1 memory=100M level=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --lines) lines=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --level) level=$2; shift 2 ;;
    *) echo "usage: $0 [--lines N] [--dir DIR] [--runs K] [--memory SIZE] [--level L]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench
bin=$root/target/release
work=$(mktemp -d "$dir/xsort-temp-compression.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/t"

echo "# Temp runs plain and compressed, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
machine_context "$dir" "$work"
echo "- xsort $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (release); $lines \`gensort -a\` lines, -S $memory, $runs run(s) each, medians"
echo

"$bin/gensort" -c -a "$lines" "$work/in" 2> "$work/gen.txt"; sum=$(tail -1 "$work/gen.txt")

# Sorts K times with ARGS, keeping the last statistics in $work/NAME.json; prints the median time.
sort_runs() { # NAME ARGS...
  local name=$1 t=() i
  shift
  for i in $(seq "$runs"); do
    rm -f "$work/$name.out"; sync; cat "$work/in" > /dev/null
    t+=("$(timed "$bin/xsort" -S "$memory" -T "$work/t" --stats-json "$work/$name.json" -o "$work/$name.out" "$@" "$work/in")")
  done
  echo "${t[*]}" | median
}

# One row of the table from NAME's statistics and median time.
row() { # CASE RUNS TIME NAME
  python3 - "$work/$4.json" "$1" "$2" "$3" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
plain, written = s["temp_run_bytes"], s["temp_written_bytes"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {plain / 1e6:.0f} | {written / 1e6:.0f} | "
      f"{written / max(plain, 1):.3f} | {s['runs']} | {s['merge_levels']} | {s['peak_rss_bytes'] / 2**20:.0f} |")
EOF
}

echo "| case | runs | wall s | run MB | written MB | written / run | runs | merge levels | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for case in records lines; do
  case $case in
    records) args=(--record-size=100 --key-bytes=0:10) ;;
    lines) args=(--locale-order=bytes) ;;
  esac
  plain=$(sort_runs "$case-plain" "${args[@]}" --no-compress-temp)
  packed=$(sort_runs "$case-zstd" "${args[@]}" --compress-temp="$level")
  cmp "$work/$case-plain.out" "$work/$case-zstd.out" || { echo "FAILED: $case: the outputs differ" >&2; exit 1; }
  [[ $case == lines ]] || check "$work/$case-zstd.out" "$sum"
  row "$case" plain "$plain" "$case-plain"
  row "$case" "zstd:$level" "$packed" "$case-zstd"
  rm -f "$work/$case-plain.out" "$work/$case-zstd.out"
done
echo
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
