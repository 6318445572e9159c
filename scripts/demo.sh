#!/usr/bin/env bash
# The main job end to end on data this script makes itself: build, generate Sort Benchmark records
# with xsort's gensort, sort them with xsort (statistics on), validate with valsort and check that the
# output's checksum equals the generator's. Then the same data as text lines (`gensort -a`), sorted
# by xsort as a drop-in `sort` and compared byte for byte with GNU sort's output.
#
#   bash scripts/demo.sh [RECORDS] [DIR] [-- extra xsort options]
#   e.g. bash scripts/demo.sh 10000000 /data -- -S 200M     (a spilled sort)
set -euo pipefail
records=${1:-1000000}
dir=${2:-${TMPDIR:-/tmp}}
shift $(( $# >= 2 ? 2 : $# ))
[[ ${1:-} == "--" ]] && shift
cd "$(dirname "$0")/.."
# cargo's own progress stays on: the first build compiles about 50 crates and takes minutes on a
# small machine (README, "Two commands"); later runs only check that nothing changed.
echo "== building xsort, gensort, valsort and the C library (cargo build --release)"
cargo build --release -p xsort -p xsort-sortbench -p xsort-capi
bin=target/release
mkdir -p "$dir"
work=$(mktemp -d "$dir/xsort-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== gensort: $records records of 100 bytes"
"$bin/gensort" -c "$records" "$work/input" 2> "$work/gen.txt"
gen_sum=$(tail -n 1 "$work/gen.txt")
echo "checksum $gen_sum"

echo "== xsort --record-size=100 --key-bytes=0:10 $*"
"$bin/xsort" --record-size=100 --key-bytes=0:10 --stats -T "$work" -o "$work/output" "$work/input" "$@"

echo "== valsort"
"$bin/valsort" "$work/output" 2> "$work/val.txt" || { cat "$work/val.txt"; exit 1; }
cat "$work/val.txt"
val_sum=$(sed -n 's/^Checksum: //p' "$work/val.txt")
if [[ "$val_sum" != "$gen_sum" ]]; then
  echo "FAILED: output checksum $val_sum differs from input checksum $gen_sum"
  exit 1
fi
echo "OK: sorted, and the output's checksum equals the input's ($gen_sum)"

echo "== text lines: xsort -k1.1,1.10 -s against LC_ALL=C sort -k1.1,1.10 -s ($records gensort -a lines)"
"$bin/gensort" -a "$records" "$work/lines" 2> /dev/null
# Both under LC_ALL=C: xsort always compares bytes (and would say so under a collating locale).
LC_ALL=C "$bin/xsort" -k1.1,1.10 -s --stats -T "$work" -o "$work/xsorted" "$work/lines" "$@" 2>&1 | sed -n '1,5p'
LC_ALL=C sort -k1.1,1.10 -s -T "$work" -o "$work/gnusorted" "$work/lines"
if cmp -s "$work/xsorted" "$work/gnusorted"; then
  echo "OK: xsort's output is byte-identical to GNU sort's"
  echo "(the C library, with Nsort's calls: $bin/libxsort.so and libxsort.a; docs/NSORT.md, Linking)"
else
  echo "FAILED: xsort's output differs from GNU sort's"
  exit 1
fi
