#!/usr/bin/env bash
# The cost of a typed key: xsort on N random 64-byte records (default 10^7 = 640 MB), sorted
#   1. by an 8-byte little-endian unsigned integer key:  --key-bytes 0:8:u64le
#   2. by a plain 8-byte byte key at the same offset:     --key-bytes 0:8
# both on the same file, kept in the page cache, output to /dev/null (or --out FILE), K runs each
# (default 3) interleaved, reporting the medians and the ratio typed/plain (the target is <= 1.2).
#
#   bash bench/typed_keys.sh [--records N] [--dir DIR] [--runs K] [--out FILE]
#
# Run it on a quiet machine (`uptime`: load < 1.5). The input is deleted at the end.
set -euo pipefail
records=10000000 dir=${TMPDIR:-/tmp} runs=3 out=/dev/null
while [[ $# -gt 0 ]]; do
  case $1 in
    --records) records=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--records N] [--dir DIR] [--runs K] [--out FILE]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort
xsort=$root/target/release/xsort
work=$(mktemp -d "$dir/xsort-typed.XXXXXX")
trap 'rm -rf "$work"' EXIT
input=$work/in


echo "# typed keys: $records records of 64 bytes, $runs runs each, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "- machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) threads; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- xsort: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (release build)"

# Random records, written in 64 MiB pieces; random keys make the two sorts do the same work.
python3 - "$input" "$records" <<'EOF'
import os, sys
path, n = sys.argv[1], int(sys.argv[2])
left = n * 64
with open(path, "wb") as f:
    while left:
        k = min(left, 64 << 20)
        f.write(os.urandom(k))
        left -= k
EOF
cat "$input" > /dev/null # into the page cache
# One untimed sort of each kind first: the first run after the build pays for loading and faults.
"$xsort" --record-size=64 --key-bytes=0:8:u64le --no-progress -T "$work" -o "$out" "$input"
"$xsort" --record-size=64 --key-bytes=0:8 --no-progress -T "$work" -o "$out" "$input"

# Each sort writes a new file (replacing the last output would also time freeing its blocks). Only
# a regular file is removed: the default /dev/null, or any device, stays (as root, rm deletes it).
fresh_output() { if [ -f "$out" ]; then rm -f "$out"; fi; }

typed=() plain=()
for _ in $(seq "$runs"); do
  fresh_output
  typed+=("$(timed "$xsort" --record-size=64 --key-bytes=0:8:u64le --no-progress -T "$work" -o "$out" "$input")")
  fresh_output
  plain+=("$(timed "$xsort" --record-size=64 --key-bytes=0:8 --no-progress -T "$work" -o "$out" "$input")")
done
T=$(echo "${typed[*]}" | median) P=$(echo "${plain[*]}" | median)
echo "- --key-bytes=0:8:u64le: ${typed[*]} s, median $T s"
echo "- --key-bytes=0:8:       ${plain[*]} s, median $P s"
echo "- ratio typed/plain: $(python3 -c "print(f'{$T / $P:.3f}')") (target <= 1.2)"
