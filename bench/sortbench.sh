#!/usr/bin/env bash
# Reproduces the two speed figures of crates/sortbench/README.md:
#   1. gensort -c 100000000 /dev/null  (10 GB made and checksummed, none written)
#   2. valsort -q on a 1 GB file already in the page cache
#
# Usage: bash bench/sortbench.sh [DIR]
#   DIR holds the 1 GB file (default /tmp); the file is deleted afterwards.
#   RUNS=N sets the runs per figure (default 3); every run is printed.
set -euo pipefail

dir="${1:-/tmp}"
runs="${RUNS:-3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

cargo build --release --quiet -p xsort-sortbench --manifest-path "$root/Cargo.toml"
target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
bin="$target/release"

data="$(mktemp "$dir/sortbench-bench.XXXXXX")"
trap 'rm -f "$data" "$data.sum"' EXIT INT TERM

# Runs a command; sets $elapsed (wall-clock seconds) and $status (its exit status).
seconds() {
    local t0 t1
    t0="$(date +%s.%N)"
    status=0
    "$@" || status=$?
    t1="$(date +%s.%N)"
    elapsed="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
}

echo "machine: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

echo "1) $bin/gensort -c 100000000 /dev/null"
for _ in $(seq "$runs"); do
    seconds "$bin/gensort" -c 100000000 /dev/null 2>"$data.sum"
    echo "   ${elapsed} s   checksum $(cat "$data.sum") (reference: 2faf4162801872c)"
done
rm -f "$data.sum"
echo

echo "2) $bin/valsort -q FILE   (FILE: gensort 10000000, 1 GB, unsorted, in the page cache)"
"$bin/gensort" 10000000 "$data"
# gensort writes with O_DIRECT, which bypasses the page cache: read it in.
cat "$data" >/dev/null
cat "$data" >/dev/null
for _ in $(seq "$runs"); do
    seconds "$bin/valsort" -q "$data"
    # Unsorted input: exit status 1 is valsort's correct answer.
    if [ "$status" -ne 1 ]; then
        echo "valsort exited with $status, expected 1" >&2
        exit 1
    fi
    echo "   ${elapsed} s   $(awk -v t="$elapsed" 'BEGIN { printf "%.2f", 1.0 / t }') GB/s"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
